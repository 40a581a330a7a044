"""The request ids a match keeps in memory: each seat's latest few with what they wrote, and
of every other id only that it was used.

Why a bound: a request id is kept so that a retry is answered with its first result instead of
acting twice, and a client retries the request it sent last. Every id of a long match kept with
its result (a key and three numbers, about 130 bytes) made request ids most of what a hosted
match holds: 51 of 82 KB after 400 actions. So each seat keeps its latest
:data:`RECENT_PER_SEAT` with their results, and of all its ids a 64-bit hash each, in a sorted
array (8 bytes an id). An id whose hash is not there was never used by that seat: a new id, the
every-action case, costs no read of the store. One whose hash is there but whose result memory
no longer holds (an old retry, or a reuse) is looked up in the store, which records every
request in the same transaction as its events, before anything is applied. The hashes are
``hash(str)``: keyed afresh in every process, so a client cannot make ids collide on purpose,
and a chance collision costs only that read.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable
from typing import Final

from ..store import Answered

RECENT_PER_SEAT: Final = 4
"""Request ids each seat keeps with their results: its last, and a few before it for clients
that pipeline or retry late."""

Result = tuple[int, int, int | None]
"""``(first_seq, last_seq, action)``; the action ``None`` until asked for, for an id read from
the store (its first event says it)."""


class RecentRequests:
    """Each seat's latest request ids and what they wrote, and whether it used any other."""

    def __init__(self, players: int) -> None:
        self._by_seat: list[dict[str, Result]] = [{} for _ in range(players)]
        self._used: list[array[int]] = [array("q") for _ in range(players)]

    def get(self, seat: int, request_id: str) -> Result | None:
        return self._by_seat[seat].get(request_id)

    def used(self, seat: int, request_id: str) -> bool:
        """Whether the seat may have used this id before (it has, but for a hash collision)."""
        hashes, key = self._used[seat], hash(request_id)
        at = bisect_left(hashes, key)
        return at < len(hashes) and hashes[at] == key

    def put(self, seat: int, request_id: str, result: Result) -> None:
        """Note a request's result (the newest of its seat; a known id keeps its place)."""
        recent = self._by_seat[seat]
        if request_id not in recent and len(recent) >= RECENT_PER_SEAT:
            del recent[next(iter(recent))]  # dicts keep insertion order: the oldest
        recent[request_id] = result
        self._note_used(seat, request_id)

    def learn(self, recorded: Iterable[Answered]) -> None:
        """Know the requests the store recorded (a restart, a take-over, a write whose answer
        was lost) beside those already known: each seat keeps its latest, by first seq."""
        for each in recorded:
            seat_text, _, request_id = each.request_id.partition(":")
            if seat_text.isdigit() and int(seat_text) < len(self._by_seat):
                seat = int(seat_text)
                self._by_seat[seat].setdefault(request_id, (each.first_seq, each.last_seq, None))
                self._note_used(seat, request_id)
        for seat, recent in enumerate(self._by_seat):
            latest = sorted(recent.items(), key=lambda item: item[1][0])[-RECENT_PER_SEAT:]
            self._by_seat[seat] = dict(latest)

    def written(self) -> dict[tuple[int, str], tuple[int, int]]:
        """``(seat, request id) -> (first_seq, last_seq)`` of every id kept with its result."""
        return {
            (seat, request_id): (first, last)
            for seat, recent in enumerate(self._by_seat)
            for request_id, (first, last, _action) in recent.items()
        }

    def __len__(self) -> int:
        return sum(len(recent) for recent in self._by_seat)

    def _note_used(self, seat: int, request_id: str) -> None:
        hashes, key = self._used[seat], hash(request_id)
        at = bisect_left(hashes, key)
        if at == len(hashes) or hashes[at] != key:
            hashes.insert(at, key)
