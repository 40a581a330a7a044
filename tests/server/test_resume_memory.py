"""A restart's memory beyond what it keeps: resuming many unfinished matches with long logs
must not hold every raw log at once. ``EventStore.unfinished_logs()`` with no page reads them
all in one list, which ``Arena.load_unfinished`` holds until the last match is hosted: about
280 bytes per stored event beyond the hosted matches themselves (measured: 11 MB for 200
Hexathlons of 200 entries, on top of 3.4 MB hosted; 5,000 long matches would add hundreds
of MB, against the 1 GiB limit of deploy/k8s, before PostgreSQL's result buffers). Paged
through ``unfinished_log_batches``, what a restart holds beyond the hosted matches is one
page, however many matches there are."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import tracemalloc
from pathlib import Path

import pytest

from cardarena.server.hosting import Arena
from cardarena.server.store import MatchLog, SqliteStore
from cardarena.server.store import events as store_events

PAGE = 8
FEW = PAGE
MANY = 8 * PAGE


async def one_long_log(path: Path) -> MatchLog:
    """A Hexathlon played 150 moves in: its record, seats and log."""
    async with SqliteStore(path) as store:
        arena = Arena(store)
        hosted = await arena.create("hexathlon", 4, None)
        for seat in range(4):
            await hosted.join(seat, f"p{seat}", contribution=bytes([seat]) * 32)
        for _ in range(150):
            to_act = hosted.engine.to_act
            assert to_act is not None and hosted.running
            await hosted.submit(to_act, hosted.engine.legal_actions()[-1], hosted.last_seq, "")
        await arena.shutdown()
        (log,) = await store.unfinished_logs()
        return log


async def copies(path: Path, log: MatchLog, count: int) -> None:
    """``count`` unfinished matches with that log (the rebuild reads neither ids nor hashes)."""
    async with SqliteStore(path) as store:
        for i in range(count):
            match_id = f"{i:016x}"
            created = f"2026-01-01T00:00:{i // 1000:02d}.{i % 1000:03d}000Z"
            await store.create_match(
                dataclasses.replace(log.record, match_id=match_id, created_at=created)
            )
            for seat in log.seats:
                await store.set_seat(match_id, seat.seat, seat.token_hash, seat.name)
            await store.append(match_id, [e.payload for e in log.events], expected_seq=0)


async def transient(path: Path) -> int:
    """Bytes a resume of the store at ``path`` held at its peak beyond what it keeps."""
    async with SqliteStore(path) as store:
        arena = Arena(store)
        gc.collect()
        tracemalloc.start()
        try:
            # Its last read is an empty page (both counts are whole pages): a reader thread
            # that has not yet let go of its result holds nothing worth counting.
            await arena.resume_unfinished()
            gc.collect()
            kept, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        await arena.shutdown()
        return peak - kept


def test_a_restart_holds_one_page_of_logs_beyond_the_matches_it_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_events, "RESUME_BATCH", PAGE)

    async def main() -> tuple[int, int]:
        log = await one_long_log(tmp_path / "one.db")
        await copies(tmp_path / "few.db", log, FEW)
        await copies(tmp_path / "many.db", log, MANY)
        return await transient(tmp_path / "few.db"), await transient(tmp_path / "many.db")

    few, many = asyncio.run(asyncio.wait_for(main(), 120))
    # Eight times the matches: about eight times the peak if every log is held at once,
    # about the same if a page is.
    assert many < 2.5 * few, f"{FEW} matches: {few} B beyond what is kept; {MANY}: {many} B"
