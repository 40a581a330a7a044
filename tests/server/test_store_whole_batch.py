"""SQLite's writer runs a batch in which nothing fails without a savepoint per request (two
statements fewer each), and, if one request fails, runs the batch again a savepoint each: the
failure stays its request's alone (``test_store.test_a_failing_request_fails_alone``), and
what the others wrote is committed once, not twice."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from cardarena.server.store import SqliteStore, StoreConflict
from tests.stores import record
from tests.waiting import eventually


def run_batch(path: Path, stale: bool) -> tuple[list[str], list[Any], list[int]]:
    """Eight appends held behind a gate so that they form one batch (the fourth refused as
    stale if ``stale``): the writer's statements while it ran, the outcomes, each log's seqs."""
    statements: list[str] = []
    gate, entered = threading.Event(), threading.Event()

    def trace(conn: Any) -> None:
        conn.set_trace_callback(statements.append)

    def hold(conn: Any) -> None:
        entered.set()
        gate.wait(5)

    async def main() -> tuple[list[Any], list[int]]:
        async with SqliteStore(path) as store:
            for i in range(8):
                await store.create_match(record(f"m{i}"))
            await store._submit(trace)
            held = asyncio.ensure_future(store._submit(hold))
            assert await asyncio.to_thread(entered.wait, 5)
            statements.clear()
            results = asyncio.gather(
                *(
                    store.append(f"m{i}", [b"x", b"y"], expected_seq=5 if stale and i == 3 else 0)
                    for i in range(8)
                ),
                return_exceptions=True,
            )
            await eventually(lambda: store._queue.qsize() == 8, what="the appends queued")
            gate.set()
            await held
            outcome = list(await results)
            seqs = [len(await store.read_events(f"m{i}")) for i in range(8)]
            return outcome, seqs

    outcome, seqs = asyncio.run(main())
    return statements, outcome, seqs


def test_a_batch_without_failures_has_no_savepoints(tmp_path: Path) -> None:
    statements, outcome, seqs = run_batch(tmp_path / "store.db", stale=False)
    assert all(isinstance(o, list) for o in outcome)
    assert seqs == [2] * 8
    assert not [s for s in statements if "SAVEPOINT" in s]
    assert statements.count("BEGIN IMMEDIATE") == 1  # (the gate's batch commits first)
    # One statement for both events of an append, not one per event.
    assert len([s for s in statements if s.startswith("INSERT INTO events")]) == 8


def test_a_failure_reruns_the_batch_with_savepoints(tmp_path: Path) -> None:
    statements, outcome, seqs = run_batch(tmp_path / "store.db", stale=True)
    assert isinstance(outcome[3], StoreConflict)
    assert all(isinstance(o, list) for i, o in enumerate(outcome) if i != 3)
    assert seqs == [2, 2, 2, 0, 2, 2, 2, 2]  # the others' events once each, the stale none
    assert "ROLLBACK" in statements  # the whole batch's first try
    assert len([s for s in statements if s.startswith("SAVEPOINT")]) == 8
