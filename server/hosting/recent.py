"""The request ids a match keeps in memory: each seat's most recent few, not all of them.

Why a bound: a request id is kept so that a retry is answered with its first result instead of
acting twice, and a client retries the request it sent last. Every id of a long match kept in
memory (a key and three numbers, about 130 bytes) made request ids most of what a hosted match
holds: 51 of 82 KB after 400 actions. The store records every one anyway, in the same
transaction as its events, so an older id is still answered right, from the store, on the rare
paths where it can come back:

* a true repeat always carries its original ``expected_seq``, which its own write has made
  stale: only a stale request needs a look in the store (:meth:`~.match.HostedMatch._answered`);
* an old id reused at the current seq is caught by the append itself, which checks the id in
  the statement that checks the seq (``DuplicateRequest``): the match goes back to its log and
  the reuse is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..store import Answered

RECENT_PER_SEAT: Final = 4
"""Request ids each seat's memory keeps: its last, and a few before it for clients that
pipeline or retry late."""

Result = tuple[int, int, int | None]
"""``(first_seq, last_seq, action)``; the action ``None`` until asked for, for an id read from
the store (its first event says it)."""


class RecentRequests:
    """Each seat's :data:`RECENT_PER_SEAT` latest request ids and what each wrote."""

    def __init__(self, players: int) -> None:
        self._by_seat: list[dict[str, Result]] = [{} for _ in range(players)]

    def get(self, seat: int, request_id: str) -> Result | None:
        return self._by_seat[seat].get(request_id)

    def put(self, seat: int, request_id: str, result: Result) -> None:
        """Note a request's result (the newest of its seat; a known id keeps its place)."""
        recent = self._by_seat[seat]
        if request_id not in recent and len(recent) >= RECENT_PER_SEAT:
            del recent[next(iter(recent))]  # dicts keep insertion order: the oldest
        recent[request_id] = result

    def learn(self, recorded: Iterable[Answered]) -> None:
        """Know the requests the store recorded (a restart, a take-over, a write whose answer
        was lost) beside those already known: each seat keeps its latest, by first seq."""
        for each in recorded:
            seat_text, _, request_id = each.request_id.partition(":")
            if seat_text.isdigit() and int(seat_text) < len(self._by_seat):
                recent = self._by_seat[int(seat_text)]
                recent.setdefault(request_id, (each.first_seq, each.last_seq, None))
        for seat, recent in enumerate(self._by_seat):
            latest = sorted(recent.items(), key=lambda item: item[1][0])[-RECENT_PER_SEAT:]
            self._by_seat[seat] = dict(latest)

    def written(self) -> dict[tuple[int, str], tuple[int, int]]:
        """``(seat, request id) -> (first_seq, last_seq)`` of every id kept."""
        return {
            (seat, request_id): (first, last)
            for seat, recent in enumerate(self._by_seat)
            for request_id, (first, last, _action) in recent.items()
        }

    def __len__(self) -> int:
        return sum(len(recent) for recent in self._by_seat)
