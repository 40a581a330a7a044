"""The event store, SQLite and PostgreSQL alike: durable, chained, group-committed, honest about
conflicts, and (between processes) fenced by leases. Every test runs against both."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest

from cardarena.server.store import (
    DuplicateRequest,
    EventStore,
    InvalidPageToken,
    SeatRecord,
    StoreClosed,
    StoreConflict,
    StoredEvent,
    StoreError,
    UnknownMatch,
    chain_hash,
    genesis_hash,
    verify_chain,
)
from tests.stores import SEED, make_store, record, with_store
from tests.waiting import eventually

T = TypeVar("T")


def raw_execute(url: str, statement: str) -> None:
    """Run one statement on the store's database behind its back."""
    if url.startswith("sqlite:"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite://"))) as conn:
            conn.execute(statement)
            conn.commit()
    else:
        base, _, schema = url.rpartition("schema=")
        with psycopg.connect(base.rstrip("?&"), autocommit=True) as conn:
            conn.execute(f"SET search_path TO {schema}")
            conn.execute(statement.encode())


def payloads(match_id: str, first: int, count: int) -> list[bytes]:
    return [f"{match_id}:{seq}".encode() for seq in range(first, first + count)]


# --------------------------------------------------------------------------- basics


def test_round_trip_survives_reopening(url: str) -> None:

    async def write(store: EventStore) -> list[StoredEvent]:
        await store.create_match(record("m1"))
        await store.set_seat("m1", 2, b"\x01" * 32, "alice")
        first = await store.append("m1", [b"a", b"b"], expected_seq=0)
        second = await store.append("m1", [b"c"], expected_seq=2, request_id="r1", seat=2)
        return first + second

    written = with_store(url, write)
    assert [(e.seq, e.payload) for e in written] == [(1, b"a"), (2, b"b"), (3, b"c")]

    async def read(store: EventStore) -> None:
        assert await store.get_match("m1") == record("m1")
        assert await store.get_match("nope") is None
        assert await store.get_seats("m1") == [SeatRecord("m1", 2, b"\x01" * 32, "alice")]
        assert await store.read_events("m1") == written
        assert await store.read_events("m1", after_seq=1, limit=1) == written[1:2]
        assert await store.read_events("m1", after_seq=3) == []
        assert await store.last_seq("m1") == 3
        assert await store.last_hash("m1") == written[-1].hash
        assert await store.last_seq("empty") == 0
        assert await store.last_hash("empty") == genesis_hash("empty")
        assert await store.request_result("m1", "r1") == (3, 3)
        assert await store.request_result("m1", "r2") is None
        assert [m.match_id for m in await store.unfinished_matches()] == ["m1"]
        await store.end_match("m1", "2026-01-01T01:00:00.000000Z")
        ended = await store.get_match("m1")
        assert ended is not None and (ended.status, ended.ended_at) == (
            "ended",
            "2026-01-01T01:00:00.000000Z",
        )
        assert await store.unfinished_matches() == []

    with_store(url, read)
    if url.startswith("sqlite:"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite://"))) as conn:
            assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_unfinished_logs_are_what_the_per_match_reads_say_in_one_read(url: str) -> None:
    """What a restart replays, read in bulk: every unfinished match oldest first (as
    ``unfinished_matches``), each with exactly its seats and its whole log in order, and
    nothing of an ended match."""

    async def body(store: EventStore) -> None:
        for match_id, second in (("m2", 2), ("m1", 1), ("m3", 3), ("m4", 4)):
            await store.create_match(record(match_id, f"2026-01-01T00:00:0{second}.000000Z"))
        await store.set_seat("m1", 3, b"\x03" * 32, "dora")
        await store.set_seat("m1", 0, b"\x00" * 32, "ann")
        await store.set_seat("m3", 0, b"\x05" * 32, "eve")
        await store.append("m1", payloads("m1", 1, 3), expected_seq=0)
        await store.append("m2", payloads("m2", 1, 2), expected_seq=0)
        await store.append("m3", payloads("m3", 1, 1), expected_seq=0)
        await store.append("m1", payloads("m1", 4, 2), expected_seq=3)  # interleaved
        await store.end_match("m3", "2026-01-01T01:00:00.000000Z")
        logs = await store.unfinished_logs()
        assert [log.record for log in logs] == await store.unfinished_matches()
        assert [log.record.match_id for log in logs] == ["m1", "m2", "m4"]
        for log in logs:
            assert log.seats == await store.get_seats(log.record.match_id)
            assert log.events == await store.read_events(log.record.match_id)
        assert [s.seat for s in logs[0].seats] == [0, 3]
        assert [e.seq for e in logs[0].events] == [1, 2, 3, 4, 5]
        assert verify_chain("m1", logs[0].events) is None
        assert (logs[2].seats, logs[2].events) == ([], [])
        await store.end_match("m1", "2026-01-01T01:00:00.000000Z")  # the readers still work
        assert [log.record.match_id for log in await store.unfinished_logs()] == ["m2", "m4"]

    with_store(url, body)


def test_refusals(url: str) -> None:
    async def body(store: EventStore) -> None:
        await store.create_match(record("m1"))
        with pytest.raises(StoreConflict):
            await store.create_match(record("m1"))
        await store.set_seat("m1", 0, b"t" * 32, "alice")
        with pytest.raises(StoreConflict):
            await store.set_seat("m1", 0, b"u" * 32, "bob")
        with pytest.raises(ValueError, match="out of range"):
            await store.set_seat("m1", 4, b"u" * 32, "bob")
        with pytest.raises(UnknownMatch):
            await store.set_seat("nope", 0, b"u" * 32, "bob")
        with pytest.raises(UnknownMatch):
            await store.append("nope", [b"x"], expected_seq=0)
        with pytest.raises(ValueError):
            await store.append("m1", [], expected_seq=0)
        await store.end_match("m1", "2026-01-01T01:00:00Z")
        with pytest.raises(StoreConflict, match="ended"):
            await store.append("m1", [b"late"], expected_seq=0)
        with pytest.raises(StoreConflict, match="ended"):
            await store.end_match("m1", "2026-01-01T02:00:00Z")
        with pytest.raises(InvalidPageToken):
            await store.list_matches(page_size=10, page_token="not a token")

    with_store(url, body)


def test_closed_store_refuses_work(url: str) -> None:
    async def main() -> None:
        store = make_store(url)
        with pytest.raises(StoreClosed):
            await store.get_match("m1")
        async with store:
            await store.create_match(record("m1"))
        await store.close()  # idempotent
        with pytest.raises(StoreClosed):
            await store.append("m1", [b"x"], expected_seq=0)
        with pytest.raises(StoreClosed):
            await store.last_seq("m1")

    asyncio.run(main())


def test_reopen_and_refuse_a_newer_schema(url: str) -> None:
    async def main() -> None:
        store = make_store(url)
        for n in (1, 2):  # the same instance can be opened again after closing
            async with store:
                await store.create_match(record(f"m{n}"))
        raw_execute(url, "UPDATE schema_version SET version = 99")
        with pytest.raises(StoreError, match="schema version 99"):
            await store.open()
        with pytest.raises(StoreClosed):
            await store.get_match("m1")

    asyncio.run(main())


def test_a_failing_commit_hook_is_not_fatal(url: str) -> None:
    def hook(size: int, seconds: float) -> None:
        raise RuntimeError("broken metrics")

    async def body(store: EventStore) -> None:
        await store.create_match(record("m1"))
        await store.append("m1", [b"a"], expected_seq=0)
        assert await store.last_seq("m1") == 1

    with_store(url, body, on_commit=hook)


def test_secrets_stay_out_of_reprs() -> None:
    seat = SeatRecord("m1", 0, b"\xaa" * 32, "alice")
    for text in (repr(record("m1")), repr(seat)):
        assert "seed" not in text and "token_hash" not in text
        assert repr(SEED) not in text and repr(b"\xaa" * 32) not in text


# --------------------------------------------------------------------------- the chain


def test_hash_chain_and_verify_chain(url: str) -> None:
    async def body(store: EventStore) -> list[StoredEvent]:
        await store.create_match(record("m1"))
        await store.append("m1", payloads("m1", 1, 3), expected_seq=0)
        await store.append("m1", payloads("m1", 4, 3), expected_seq=3)
        return await store.read_events("m1")

    events = with_store(url, body)
    prev = genesis_hash("m1")
    for event in events:
        prev = chain_hash(prev, event.payload)
        assert event.hash == prev
    assert verify_chain("m1", events) is None
    assert verify_chain("m1", []) is None
    # The genesis hash binds a log to its match: the same log is wrong for another id.
    assert verify_chain("m2", [dataclasses.replace(e, match_id="m2") for e in events]) == 1

    flipped = bytearray(events[3].payload)
    flipped[0] ^= 0x01
    tampered = [*events[:3], dataclasses.replace(events[3], payload=bytes(flipped)), *events[4:]]
    assert verify_chain("m1", tampered) == 4
    bad_hash = bytearray(events[2].hash)
    bad_hash[-1] ^= 0x80
    assert (
        verify_chain(
            "m1", [*events[:2], dataclasses.replace(events[2], hash=bytes(bad_hash)), *events[3:]]
        )
        == 3
    )
    assert verify_chain("m1", events[:1] + events[2:]) == 2  # event 2 dropped
    assert verify_chain("m1", [events[0], events[2], events[1], *events[3:]]) == 2  # swapped
    renumbered = [dataclasses.replace(e, seq=e.seq + 1) for e in events]
    assert verify_chain("m1", renumbered) == 1
    assert verify_chain("m1", events[:-1]) is None  # a lost tail needs a trusted last seq


def test_expected_seq_is_the_single_writer_guard(url: str) -> None:
    async def body(store: EventStore) -> None:
        await store.create_match(record("m1"))
        with pytest.raises(StoreConflict, match="expected 1"):
            await store.append("m1", [b"x"], expected_seq=1)
        await store.append("m1", [b"a", b"b"], expected_seq=0)
        for stale in (0, 1, 3):
            with pytest.raises(StoreConflict):
                await store.append("m1", [b"x"], expected_seq=stale)
        # Two writers racing from the same seq: exactly one wins, the log does not fork.
        results = await asyncio.gather(
            store.append("m1", [b"left"], expected_seq=2),
            store.append("m1", [b"right"], expected_seq=2),
            return_exceptions=True,
        )
        assert sorted(type(r).__name__ for r in results) == ["StoreConflict", "list"]
        events = await store.read_events("m1")
        assert [e.seq for e in events] == [1, 2, 3]
        assert verify_chain("m1", events) is None

    with_store(url, body)


def test_duplicate_request_returns_the_original_seqs_and_writes_nothing(url: str) -> None:
    async def body(store: EventStore) -> None:
        await store.create_match(record("m1"))
        await store.append("m1", [b"opening"], expected_seq=0)
        first = await store.append("m1", [b"a", b"b"], expected_seq=1, request_id="r1", seat=1)
        assert [e.seq for e in first] == [2, 3]
        before = await store.read_events("m1")
        # The retry carries its original (now stale) expected_seq, and a current one.
        for expected in (1, 3):
            with pytest.raises(DuplicateRequest) as caught:
                await store.append("m1", [b"c"], expected_seq=expected, request_id="r1", seat=1)
            assert (caught.value.first_seq, caught.value.last_seq, caught.value.seat) == (2, 3, 1)
        assert await store.read_events("m1") == before
        assert await store.request_result("m1", "r1") == (2, 3)
        # Request ids are per match.
        await store.create_match(record("m2"))
        await store.append("m2", [b"x"], expected_seq=0, request_id="r1")
        assert await store.request_result("m2", "r1") == (1, 1)

    with_store(url, body)


# --------------------------------------------------------------------------- group commit


def test_concurrent_appends_are_group_committed(url: str) -> None:
    batches: list[int] = []
    matches = [f"m{i:02d}" for i in range(50)]

    async def writer(store: EventStore, match_id: str) -> None:
        seq = 0
        for count in (1, 2, 3, 1):  # four appends per match, each after the previous one
            events = await store.append(
                match_id, payloads(match_id, seq + 1, count), expected_seq=seq
            )
            assert [e.seq for e in events] == list(range(seq + 1, seq + count + 1))
            seq += count

    async def body(store: EventStore) -> None:
        await asyncio.gather(*(store.create_match(record(m)) for m in matches))
        batches.clear()
        await asyncio.gather(*(writer(store, m) for m in matches))
        for match_id in matches:
            events = await store.read_events(match_id)
            assert [e.payload for e in events] == payloads(match_id, 1, 7)
            assert verify_chain(match_id, events) is None

    with_store(url, body, on_commit=lambda size, _seconds: batches.append(size))
    assert sum(batches) == 200
    assert max(batches) > 1, batches
    assert len(batches) < 200


def test_a_failing_request_fails_alone(url: str) -> None:
    """White-box: hold the writer on a gate so that every request below lands in one batch,
    including one that writes an event and then fails; only it is rolled back."""
    batches: list[int] = []
    gate = threading.Event()
    entered = threading.Event()

    def hold(conn: Any) -> None:
        entered.set()
        gate.wait(5)

    def fail_at_once(conn: Any) -> None:
        raise LookupError("a bug before the request's first statement")

    def write_then_fail(conn: Any) -> None:
        conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", ("m0", 2, b"\0", b"\0"))
        raise RuntimeError("a bug in the middle of a request")

    async def body(store: EventStore) -> None:
        for i in range(4):
            await store.create_match(record(f"m{i}"))
        await store.append("m0", [b"first"], expected_seq=0)
        held = asyncio.ensure_future(store._submit(hold))
        assert await asyncio.to_thread(entered.wait, 5)  # the writer holds the gate's batch
        batches.clear()
        results = asyncio.gather(
            store.append("m1", [b"a"], expected_seq=0),
            store._submit(write_then_fail),
            store.append("m2", [b"b"], expected_seq=5),  # refused: stale
            store.append("m3", [b"c"], expected_seq=0),
            store.create_match(record("m1")),  # refused: duplicate id
            store.append("m0", [b"second"], expected_seq=1),
            store._submit(fail_at_once),
            store.append("m3", [b"d"], expected_seq=1),
            return_exceptions=True,
        )
        # Every gathered request is queued behind the gate before it opens.
        await eventually(lambda: store._queue.qsize() == 8, what="the eight requests queued")
        gate.set()
        await held
        outcome = await results
        assert batches == [1, 8]  # the gate's batch, then everything else together
        assert isinstance(outcome[0], list)
        assert isinstance(outcome[1], RuntimeError)
        assert isinstance(outcome[2], StoreConflict)
        assert isinstance(outcome[3], list)
        assert isinstance(outcome[4], StoreConflict)
        assert isinstance(outcome[6], LookupError)
        assert isinstance(outcome[7], list)
        # The failed request's insert of m0:2 was rolled back, so m0's real seq 2 went in.
        assert [e.payload for e in await store.read_events("m0")] == [b"first", b"second"]
        assert [e.payload for e in await store.read_events("m1")] == [b"a"]
        assert await store.read_events("m2") == []
        assert [e.payload for e in await store.read_events("m3")] == [b"c", b"d"]
        # The writer thread lives on.
        await store.append("m2", [b"after"], expected_seq=0)
        assert await store.last_seq("m2") == 1

    with_store(url, body, on_commit=lambda size, _seconds: batches.append(size))


# --------------------------------------------------------------------------- durability

CHILD = """
import asyncio, sys
from pathlib import Path
from cardarena.server.store import MatchRecord
from cardarena.server.store import open_store

async def main() -> None:
    async with open_store(sys.argv[1], data_dir=Path(".")) as store:
        ids = [f"m{i}" for i in range(4)]
        for match_id in ids:
            await store.create_match(MatchRecord(match_id, "2026-01-01T00:00:00Z", "hexathlon",
                                                 4, b"{}", bytes(32), "c", "running"))

        async def run(match_id: str) -> None:
            seq = 0
            while True:
                batch = [f"{match_id}:{s}".encode() for s in (seq + 1, seq + 2)]
                events = await store.append(match_id, batch, expected_seq=seq,
                                            request_id=f"r{seq}")
                seq = events[-1].seq
                sys.stdout.write(f"{match_id} {seq}\\n")
                sys.stdout.flush()

        await asyncio.gather(*(run(m) for m in ids))

asyncio.run(main())
"""


def test_acknowledged_events_survive_sigkill(url: str, tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), url],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    watchdog = threading.Timer(10, child.kill)  # never hang the suite
    watchdog.start()
    acknowledged: dict[str, int] = {}
    try:
        assert child.stdout is not None
        acks = 0
        while acks < 150:  # 300 acknowledged events, then kill it mid-append
            line = child.stdout.readline()
            assert line, "the child exited early"
            match_id, seq = line.split()
            acknowledged[match_id] = int(seq)
            acks += 1
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()

    async def check(store: EventStore) -> None:
        for match_id, last in acknowledged.items():
            events = await store.read_events(match_id)
            assert len(events) >= last, (match_id, len(events), last)
            assert [e.payload for e in events] == payloads(match_id, 1, len(events))
            assert verify_chain(match_id, events) is None
            assert await store.request_result(match_id, f"r{last - 2}") == (last - 1, last)

    with_store(url, check)
