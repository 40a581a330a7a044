"""What sharing one database between processes needs: leases that fence a stale owner off, a
sequence guard that holds between store instances, notifications of every append, and store
URLs that name the database without leaking its password."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from cardarena.server.store import (
    EventStore,
    LeaseLost,
    MatchRecord,
    Owner,
    SeatRecord,
    SqliteStore,
    StoreConflict,
    UnknownMatch,
    open_store,
    verify_chain,
)
from cardarena.server.store.postgres import PostgresStore, redact, split_schema
from tests.stores import make_store, postgres_schema

ALICE = Owner("replica-a", "10.0.0.1:50051", lease_ms=60_000)
BOB = Owner("replica-b", "10.0.0.2:50051", lease_ms=60_000)


def record(match_id: str) -> MatchRecord:
    return MatchRecord(
        match_id, "2026-01-01T00:00:00.000Z", "hexathlon", 4, b"{}", b"s" * 32, "c", "running"
    )


def test_a_lease_has_one_owner_until_it_expires(url: str) -> None:
    async def main() -> None:
        async with make_store(url) as store:
            fence = await store.create_match(record("m1"), ALICE)
            assert fence is not None and (fence.owner, fence.epoch) == ("replica-a", 1)
            lease = await store.get_lease("m1")
            assert lease is not None and lease.live and lease.address == ALICE.address
            # Bob cannot take a live lease; he learns where to forward instead.
            held = await store.acquire_lease("m1", BOB)
            assert (held.owner, held.address, held.epoch) == ("replica-a", ALICE.address, 1)
            # Alice re-acquiring keeps her epoch: she does not fence herself off.
            assert (await store.acquire_lease("m1", ALICE)).epoch == 1
            await store.append("m1", [b"a"], expected_seq=0, fence=fence)
            assert await store.orphaned_matches() == []

            # Alice stops renewing: her lease runs out and Bob takes it with a new epoch.
            await store.renew_leases(Owner(ALICE.replica, ALICE.address, lease_ms=-1))
            assert await store.orphaned_matches() == ["m1"]
            taken = await store.acquire_lease("m1", BOB)
            assert (taken.owner, taken.epoch, taken.live) == ("replica-b", 2, True)
            # The stale owner is fenced off every write; the new one writes on.
            with pytest.raises(LeaseLost):
                await store.append("m1", [b"stale"], expected_seq=1, fence=fence)
            with pytest.raises(LeaseLost):
                await store.set_seat("m1", 0, b"t" * 32, "x", fence=fence)
            with pytest.raises(LeaseLost):
                await store.end_match("m1", "2026-01-01T01:00:00.000Z", fence=fence)
            await store.append("m1", [b"b"], expected_seq=1, fence=taken.fence)
            assert [e.payload for e in await store.read_events("m1")] == [b"a", b"b"]
            # Renewal reports what is still held, and only that.
            assert await store.renew_leases(ALICE) == set()
            assert await store.renew_leases(BOB) == {"m1"}
            # An ended match needs no owner: its lease goes with it and cannot be taken.
            await store.end_match("m1", "2026-01-01T01:00:00.000Z", fence=taken.fence)
            assert await store.get_lease("m1") is None
            with pytest.raises(StoreConflict, match="ended"):
                await store.acquire_lease("m1", ALICE)
            with pytest.raises(UnknownMatch):
                await store.acquire_lease("nope", ALICE)

    asyncio.run(main())


def test_released_and_never_leased_matches_are_orphans(url: str) -> None:
    async def main() -> None:
        async with make_store(url) as store:
            await store.create_match(record("m1"), ALICE)
            await store.create_match(record("m2"), ALICE)
            await store.create_match(record("m3"))  # written by a single-process server
            assert await store.orphaned_matches() == ["m3"]
            assert await store.release_leases(ALICE) == 2
            assert await store.orphaned_matches() == ["m1", "m2", "m3"]
            assert await store.orphaned_matches(limit=1) == ["m1"]
            lease = await store.acquire_lease("m2", BOB)
            assert (lease.owner, lease.epoch) == ("replica-b", 1)  # a fresh row starts at 1

    asyncio.run(main())


def test_a_join_writes_its_seat_and_its_event_together(url: str) -> None:
    async def main() -> None:
        async with make_store(url) as store:
            await store.create_match(record("m1"))
            seat = SeatRecord("m1", 1, b"h" * 32, "ann")
            await store.append("m1", [b"joined"], expected_seq=0, join=seat)
            assert await store.get_seats("m1") == [seat]
            # Seat taken: neither the row nor the event is written.
            with pytest.raises(StoreConflict, match="taken"):
                await store.append("m1", [b"again"], expected_seq=1, join=seat)
            with pytest.raises(ValueError, match="out of range"):
                await store.append("m1", [b"x"], expected_seq=1, join=SeatRecord("m1", 9, b"", ""))
            # Stale seq: the seat is not taken either.
            other = SeatRecord("m1", 2, b"i" * 32, "bob")
            with pytest.raises(StoreConflict, match="expected 0"):
                await store.append("m1", [b"late"], expected_seq=0, join=other)
            assert await store.get_seats("m1") == [seat]
            assert [e.payload for e in await store.read_events("m1")] == [b"joined"]

    asyncio.run(main())


def test_two_store_instances_never_fork_a_log(url: str) -> None:
    """Two processes' stores on one database, appending to one match from the same seq as
    fast as they can: every seq is written once, by one of them, and the chain holds."""

    async def main() -> None:
        async with make_store(url) as left, make_store(url) as right:
            await left.create_match(record("m1"))
            wins = {"left": 0, "right": 0}

            async def writer(name: str, store: EventStore) -> None:
                for _ in range(60):
                    seq = await store.last_seq("m1")
                    try:
                        await store.append("m1", [f"{name}{seq}".encode()], expected_seq=seq)
                        wins[name] += 1
                    except StoreConflict:
                        pass

            await asyncio.gather(writer("left", left), writer("right", right))
            events = await left.read_events("m1")
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            assert len(events) == wins["left"] + wins["right"]
            assert verify_chain("m1", events) is None
            assert await right.read_events("m1") == events

    asyncio.run(main())


def test_postgres_announces_every_append_to_listeners() -> None:
    with postgres_schema() as url:

        async def main() -> None:
            heard: list[tuple[str | None, int]] = []
            connected = threading.Event()
            got_two = threading.Event()

            def on_change(match_id: str | None, seq: int) -> None:
                heard.append((match_id, seq))
                if match_id is None:
                    connected.set()
                if sum(1 for m, _ in heard if m == "m1") == 2:
                    got_two.set()

            async with make_store(url) as writer, make_store(url) as reader:
                reader.listen(on_change)
                assert await asyncio.to_thread(connected.wait, 10)
                await writer.create_match(record("m1"))
                await writer.append("m1", [b"a", b"b"], expected_seq=0)
                with pytest.raises(StoreConflict):  # refused: announces nothing
                    await writer.append("m1", [b"x"], expected_seq=0)
                await writer.append("m1", [b"c"], expected_seq=2)
                assert await asyncio.to_thread(got_two.wait, 10)
            assert heard[0] == (None, 0)
            assert [h for h in heard if h[0] is not None] == [("m1", 2), ("m1", 3)]

        asyncio.run(main())


def test_store_urls() -> None:
    assert isinstance(open_store(None, data_dir=Path("/d")), SqliteStore)
    default = open_store("", data_dir=Path("/d"))
    assert isinstance(default, SqliteStore) and default.path == Path("/d/arena.sqlite3")
    absolute = open_store("sqlite:///var/x.db", data_dir=Path("/d"))
    assert isinstance(absolute, SqliteStore) and absolute.path == Path("/var/x.db")
    pg = open_store(
        "postgresql://u:secret@db:5432/arena?schema=cup&sslmode=disable", data_dir=Path()
    )
    assert isinstance(pg, PostgresStore) and pg.schema == "cup"
    assert "secret" not in pg.where and "cup" in pg.where
    assert split_schema("postgres://h/db")[1] == "public"
    assert split_schema("postgresql://h/db?schema=a&sslmode=require")[0] == (
        "postgresql://h/db?sslmode=require"
    )
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    assert redact("postgresql://h/db") == "postgresql://h/db"
    assert redact("postgresql://u@db/app?password=hunter2&sslmode=require") == (
        "postgresql://u@db/app?password=***&sslmode=require"
    )
    assert "pw" not in redact("postgresql//u:pw@h/db")  # a typo'd scheme: no netloc
    assert redact("postgresql://[::1") == "<a store URL that does not parse>"
    with pytest.raises(ValueError, match="unknown store 'mysql://u:\\*\\*\\*@h/db'"):
        open_store("mysql://u:pw@h/db", data_dir=Path())
    with pytest.raises(ValueError, match="schema must be"):
        open_store("postgresql://h/db?schema=Robert';drop", data_dir=Path())
    with pytest.raises(ValueError, match="names a file"):
        open_store("sqlite://", data_dir=Path())


def test_an_unreachable_postgres_is_a_clear_error() -> None:
    async def main() -> None:
        store = PostgresStore("postgresql://nobody:pw@127.0.0.1:1/none")
        with pytest.raises(Exception, match=r"127\.0\.0\.1") as caught:
            await store.open()
        assert "pw" not in str(caught.value)

    asyncio.run(main())
