"""A write interrupted on the way (its caller cancelled, its answer lost) must not leave the
match in memory out of step with its log, nor its streams with a gap."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.errors import RequestReused
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.hosting import arena as arena_module
from cardarena.server.store import SqliteStore, StoreError

from ..arenas import hold_appends, seated, seated_on_sqlite
from ..helpers import drain_event_seqs


def test_a_submit_cancelled_during_its_write_still_lands_whole(tmp_path: Path) -> None:
    async def main() -> None:
        async with seated_on_sqlite(tmp_path / "store.db", options={}) as (store, hosted):
            real_append = store.append
            writing, release = hold_appends(store)
            seat = hosted.engine.to_act
            assert seat is not None
            before = hosted.last_seq
            action = hosted.engine.legal_actions()[0]
            caller = asyncio.create_task(hosted.submit(seat, action, before, "r1"))
            await writing.wait()
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            release.set()
            store.append = real_append  # type: ignore[method-assign]
            async with hosted.lock:  # the write finished behind the cancelled caller
                pass
            assert hosted.last_seq == await store.last_seq(hosted.match_id) > before
            assert hosted.last_hash == await store.last_hash(hosted.match_id)
            # The retry is recognised, and play goes on from the right seq.
            again = await hosted.submit(seat, action, before, "r1")
            assert not again.applied and again.first_seq == before + 1
            nxt = hosted.engine.to_act
            assert nxt is not None
            done = await hosted.submit(nxt, hosted.engine.legal_actions()[0], hosted.last_seq, "")
            assert done.applied and done.first_seq == again.last_seq + 1

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_write_that_committed_but_failed_to_answer_is_recognised_on_retry(
    tmp_path: Path,
) -> None:
    """The store commits, then the answer is lost (the connection drops): the hosted match
    goes back to the log, streams get the committed events, and the retry of the request is
    answered with the original seqs rather than refused as stale."""

    async def main() -> None:
        async with seated_on_sqlite(tmp_path / "store.db", options={}) as (store, hosted):
            watcher = hosted.readers.subscribe(None)
            real_append = store.append

            async def commits_then_fails(*args: Any, **kwargs: Any) -> Any:
                await real_append(*args, **kwargs)
                raise StoreError("connection lost after COMMIT")

            store.append = commits_then_fails  # type: ignore[method-assign]
            seat = hosted.engine.to_act
            assert seat is not None
            before = hosted.last_seq
            action = hosted.engine.legal_actions()[0]
            with pytest.raises(StoreError):
                await hosted.submit(seat, action, before, "r1")
            store.append = real_append  # type: ignore[method-assign]
            assert hosted.last_seq == await store.last_seq(hosted.match_id) > before
            published = drain_event_seqs(watcher.queue)
            assert published == list(range(before + 1, hosted.last_seq + 1))
            again = await hosted.submit(seat, action, before, "r1")
            assert (again.applied, again.first_seq) == (False, before + 1)
            with pytest.raises(RequestReused):  # the same id for another action is no retry
                await hosted.submit(seat, action + 1, before, "r1")

    asyncio.run(asyncio.wait_for(main(), 30))


def test_ended_matches_leave_memory_beyond_a_bound_and_come_back_on_demand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "MAX_ENDED_IN_MEMORY", 2)

    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            played: list[HostedMatch] = []
            for _ in range(4):
                hosted = await seated(arena)
                if not played:
                    reader = hosted.readers.subscribe(None)  # the first one is still being read
                while not hosted.ended:
                    seat = hosted.engine.to_act
                    assert seat is not None
                    await hosted.submit(seat, hosted.engine.legal_actions()[0], hosted.last_seq, "")
                played.append(hosted)
            kept = [h.match_id for h in played if h.match_id in arena.matches]
            # At most two ended in memory, oldest out first, but not one still being read.
            assert kept == [played[0].match_id, played[3].match_id]
            played[0].readers.unsubscribe(reader)
            again = await arena.get(played[1].match_id)  # from the store, whole
            assert again is not played[1] and again.ended
            assert (again.last_seq, again.last_hash) == (played[1].last_seq, played[1].last_hash)
            assert again.engine.totals == played[1].engine.totals

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_last_join_whose_write_fails_leaves_the_match_waiting(tmp_path: Path) -> None:
    """The seat is taken in memory before its write (the write may start the match), so a
    failed write must give it back: nobody may act in a match whose last seat never joined,
    and the seat can still be joined."""

    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("triathlon", 3, None)
            for _ in range(2):
                await hosted.join(None, "bot")
            assert not hosted.running
            real_append = store.append

            async def fails(*args: Any, **kwargs: Any) -> Any:
                seen.append(hosted.status)  # as a GetMatch answered meanwhile would ask
                raise StoreError("disk full")

            seen: list[str] = []

            store.append = fails  # type: ignore[method-assign]
            with pytest.raises(StoreError):
                await hosted.join(None, "late")
            store.append = real_append  # type: ignore[method-assign]
            assert seen == ["running"]  # the seat was taken while its write was on the way
            assert (hosted.running, hosted.status) == (False, "waiting")
            await hosted.join(None, "late")
            assert (hosted.running, hosted.status) == (True, "running")

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_report_that_fails_does_not_fail_the_durable_write_it_reports(tmp_path: Path) -> None:
    """What a status change is reported to (a tournament's director) runs after the write is
    durable: if it raises, the write still answers, and play goes on. (A stop rule that
    overflowed once made every match end answer INTERNAL and go back to its log.)"""
    reported: list[str] = []

    def broken(hosted: HostedMatch) -> None:
        reported.append(hosted.status)
        raise OverflowError("a report that fails")

    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await seated(Arena(store, on_change=broken))
            while not hosted.ended:
                seat = hosted.engine.to_act
                assert seat is not None
                action = hosted.engine.legal_actions()[0]
                done = await hosted.submit(seat, action, hosted.last_seq, "")
                assert done.applied
            assert hosted.last_seq == await store.last_seq(hosted.match_id)

    asyncio.run(asyncio.wait_for(main(), 60))
    assert reported[-1] == "ended"
