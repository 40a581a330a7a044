"""A match knows its seats' latest request ids, however it came to host it: created here,
resumed after a restart, or taken over from a replica that died. A retry is answered from
memory (its action read back from the log once), and a new id costs no read of the store:
before, a resumed or taken-over match asked the store about every request id it was sent,
one read per action for as long as the match lasted. Older ids are still answered, from the
store, on the paths where they can come back."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.errors import RequestReused, Stale
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.hosting.recent import RECENT_PER_SEAT
from cardarena.server.store import EventStore, SqliteStore
from tests.arenas import LAPSED, A, B, seat_everyone, seated, with_two_arenas

READS = ("read_events", "request_result", "request_results", "get_seats", "get_match")


def counting_reads(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the store's per-match reads from now on."""
    counts: Counter[str] = Counter()
    for name in READS:
        real = getattr(store, name)

        def counted(
            *args: Any, _real: Callable[..., Any] = real, _name: str = name, **kwargs: Any
        ) -> Any:
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(store, name, counted)
    return counts


async def act(hosted: HostedMatch, request_id: str) -> tuple[int, int, int, int]:
    """The seat to act plays its lowest legal action: (seat, action, first_seq, last_seq)."""
    seat = hosted.engine.to_act
    assert seat is not None
    action = hosted.engine.legal_actions()[0]
    done = await hosted.submit(seat, action, hosted.last_seq, request_id)
    assert done.applied
    return seat, action, done.first_seq, done.last_seq


async def repeats_are_answered_and_new_ids_read_nothing(
    hosted: HostedMatch, before: list[tuple[int, int, int, int]], counts: Counter[str]
) -> None:
    """What every way of hosting a match must give: ``before`` are (seat, action, first,
    last) of requests "r0", "r1", … written before this process hosted it."""
    for i in range(6):
        await act(hosted, f"new{i}")
    assert counts == Counter(), "a new request id made the store read"
    seat, action, first, last = before[0]
    for _ in range(2):  # the second time from memory alone
        again = await hosted.submit(seat, action, first - 1, "r0")
        assert (again.applied, again.first_seq, again.last_seq) == (False, first, last)
    assert counts == Counter(read_events=1), "the repeat's action was not read back once"
    with pytest.raises(RequestReused):
        await hosted.submit(seat, action, first, "r0")  # the same id for another seq
    with pytest.raises(Stale):  # another seat's "r0" is its own id: new, and at a stale seq
        await hosted.submit((seat + 1) % hosted.record.players, action, first - 1, "r0")


def test_a_resumed_match_answers_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        path = tmp_path / "store.db"
        async with SqliteStore(path) as store:
            arena = Arena(store)
            hosted = await arena.create("hexathlon", 4, None)
            await seat_everyone(hosted)
            before = [await act(hosted, f"r{i}") for i in range(5)]
            await arena.shutdown()
        async with SqliteStore(path) as store:
            arena = Arena(store)
            assert await arena.resume_unfinished() == 1
            counts = counting_reads(store, monkeypatch)
            resumed = arena.matches[hosted.match_id]
            await repeats_are_answered_and_new_ids_read_nothing(resumed, before, counts)
            await arena.shutdown()

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_match_taken_over_answers_the_dead_owners_requests_from_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(a: Arena, b: Arena) -> None:
        mine = await seated(a)
        before = [await act(mine, f"r{i}") for i in range(4)]
        await a.store.renew_leases(LAPSED)
        taken = await b.writer_of(mine.match_id)
        assert isinstance(taken, HostedMatch) and taken.owned and taken.fence is not None
        assert taken.fence.owner == B.replica != A.replica
        counts = counting_reads(b.store, monkeypatch)
        await repeats_are_answered_and_new_ids_read_nothing(taken, before, counts)

    with_two_arenas(body)


def test_a_long_match_keeps_each_seats_latest_ids_and_still_answers_older_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory holds each seat's last few ids with their results however long the match; an
    older one is still answered as the store recorded it, before anything is applied: a
    repeat with its own seq from the store, the id reused at the current seq refused, the
    match as it was; a new id still reads nothing."""

    async def scenario() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            hosted = await arena.create("triathlon", 3, None)
            await seat_everyone(hosted)
            before = [await act(hosted, f"r{i}") for i in range(8 * RECENT_PER_SEAT)]
            assert len(hosted.requests) == 3 * RECENT_PER_SEAT
            seat, action, first, last = before[0]
            assert hosted.requests.get(seat, "r0") is None
            again = await hosted.submit(seat, action, first - 1, "r0")
            assert (again.applied, again.first_seq, again.last_seq) == (False, first, last)
            at, legal, log = hosted.last_seq, hosted.engine.legal_actions(), list(hosted.engine.log)
            reuser = hosted.engine.to_act
            assert reuser is not None
            old = [b for b in before if b[0] == reuser][1]  # an evicted id of the seat to act
            assert hosted.requests.get(reuser, f"r{before.index(old)}") is None

            async def no_replay() -> None:
                raise AssertionError("a reused id sent the match back to its log")

            monkeypatch.setattr(hosted, "_recover", no_replay)
            counts = counting_reads(store, monkeypatch)
            with pytest.raises(RequestReused):  # refused before anything is applied
                await hosted.submit(reuser, legal[0], at, f"r{before.index(old)}")
            assert counts == Counter(request_result=1, read_events=1)
            assert (hosted.last_seq, hosted.engine.legal_actions(), list(hosted.engine.log)) == (
                at,
                legal,
                log,
            )
            counts.clear()
            for i in range(6):
                await act(hosted, f"fresh{i}")  # and play goes on, new ids reading nothing
            assert counts == Counter()
            await arena.shutdown()

    asyncio.run(asyncio.wait_for(scenario(), 60))
