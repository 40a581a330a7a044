"""Two arenas (replicas) in one process on one PostgreSQL store: who writes, who forwards,
how a lease moves, and the takeovers that finish what a dead owner left half done."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import psycopg
import pytest

from cardarena.server.errors import Moved
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.hosting.replication import Replicas
from cardarena.server.store import Fence, LeaseLost, MatchRecord, StoreError
from cardarena.server.store.postgres import PostgresStore
from tests.arenas import LAPSED, A, B, act, seated, with_two_arenas
from tests.stores import POSTGRES_URL, make_store, postgres_schema
from tests.waiting import eventually

from ..helpers import drain_event_seqs


def replicas(arena: Arena) -> Replicas:
    """The arena's replication policy, which these tests drive by hand."""
    assert isinstance(arena.replication, Replicas)
    return arena.replication


def test_the_owner_writes_others_forward_and_a_lapsed_lease_moves() -> None:
    async def body(a: Arena, b: Arena) -> None:
        mine = await seated(a)
        await act(mine)
        assert await b.writer_of(mine.match_id) == A.address  # B forwards to A
        followed = await b.get(mine.match_id)
        assert (followed.owned, followed.last_seq) == (False, mine.last_seq)
        assert followed.last_hash == mine.last_hash != b""  # MatchInfo.last_hash, for audits
        with pytest.raises(Moved):
            await act(followed)  # a follower never writes
        await a.store.renew_leases(LAPSED)
        taken = await b.writer_of(mine.match_id)
        assert taken is followed
        assert (followed.owned, followed.fence) == (True, Fence(B.replica, 2))
        await act(followed)
        # The old owner, not yet aware, is fenced off, steps down and reloads the log.
        with pytest.raises(LeaseLost):
            await act(mine)
        assert (mine.owned, mine.last_seq) == (False, followed.last_seq)
        assert await a.writer_of(mine.match_id) == B.address

    with_two_arenas(body)


def test_a_match_whose_creator_died_before_the_first_deal_is_dealt_by_the_taker() -> None:
    async def body(a: Arena, b: Arena) -> None:
        created = await a.create("crazy_sixes", 3, {})
        # Another match as the creator left it: its row and lease, no events.
        record = MatchRecord(
            "deadbeef00000000",
            created.record.created_at,
            created.record.game,
            created.record.players,
            created.record.config,
            b"\x07" * 32,
            "c",
            "running",
        )
        await a.store.create_match(record, A)
        await a.store.renew_leases(LAPSED)
        claimed = await replicas(b).keep_leases_once()
        assert claimed == 2
        orphan = b.matches["deadbeef00000000"]
        assert orphan.owned and orphan.last_seq == len(orphan.engine.log) > 0
        assert await b.store.orphaned_matches() == []

    with_two_arenas(body)


def test_a_match_played_out_but_not_marked_ended_is_ended_by_the_taker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(a: Arena, b: Arena) -> None:
        hosted = await seated(a)

        async def dies_first(*args: object, **kwargs: object) -> None:
            raise LeaseLost(hosted.match_id)

        monkeypatch.setattr(a.store, "end_match", dies_first)
        while not hosted.ended:
            await act(hosted)
        assert (await b.store.get_match(hosted.match_id)).status == "running"  # type: ignore[union-attr]
        await a.store.renew_leases(LAPSED)
        await replicas(b).keep_leases_once()
        record = await b.store.get_match(hosted.match_id)
        assert record is not None and record.status == "ended"
        assert await b.store.orphaned_matches() == []

    with_two_arenas(body)


def test_an_append_while_a_follower_loads_is_not_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The owner appends between the follower reading the log and starting to follow it (so
    the notification finds nobody): the follower still ends up at the owner's seq."""

    async def body(a: Arena, b: Arena) -> None:
        mine = await seated(a)
        real_read = b.store.read_events
        interfered = False

        async def read_then_owner_acts(match_id: str, *args: Any, **kwargs: Any) -> Any:
            nonlocal interfered
            events = await real_read(match_id, *args, **kwargs)
            if not interfered:
                interfered = True
                await act(mine)
            return events

        monkeypatch.setattr(b.store, "read_events", read_then_owner_acts)
        followed = await b.get(mine.match_id)
        assert interfered
        assert followed.last_seq == mine.last_seq

    with_two_arenas(body)


class _SlowWrites(PostgresStore):
    """Holds its writer thread inside the batch transaction, after the append's checks, from
    when it is made ``slow`` until it is released: ``inside`` is set once it holds, and
    ``backend`` is the PostgreSQL process of that transaction."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slow = False
        self.inside = threading.Event()
        self.release = threading.Event()
        self.backend = 0

    def _insert_events(self, conn: Any, events: Any, request: Any) -> None:
        if self.slow:
            self.backend = conn.raw.info.backend_pid
            self.inside.set()
            self.release.wait(10)
        super()._insert_events(conn, events, request)


def waits_on(backend: int) -> bool:
    """Whether another PostgreSQL process is waiting for a lock that ``backend`` holds."""
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            (backend,),
        ).fetchone()
    return row is not None and row[0] > 0


def test_a_take_over_waits_for_the_old_owners_append_in_flight() -> None:
    """The old owner's lease has run out but its append passed the fence check and is still
    committing when another replica takes over: the taker waits for that commit and carries
    on from it, instead of reading the log before it and falling behind for good."""
    with postgres_schema() as url:

        async def main() -> None:
            async with _SlowWrites(url) as left, make_store(url) as right:
                a, b = Arena(left, owner=A), Arena(right, owner=B)
                mine = await a.create("triathlon", 3, {})
                await left.renew_leases(LAPSED)
                left.slow = True
                joining = asyncio.create_task(mine.join(None, "ann"))
                try:
                    # the join is inside its transaction now
                    assert await asyncio.to_thread(left.inside.wait, 10)
                    taking = asyncio.create_task(b.writer_of(mine.match_id))

                    async def taker_waits() -> bool:
                        return taking.done() or await asyncio.to_thread(waits_on, left.backend)

                    await eventually(taker_waits, what="the take-over to wait on the join")
                finally:
                    left.release.set()
                taken = await taking
                assert isinstance(taken, HostedMatch) and taken.owned
                seat, _ = await joining
                assert seat == 0
                assert taken.last_seq == await right.last_seq(mine.match_id)
                assert [s.name for s in taken.seats][:1] == ["ann"]
                assert (await taken.join(None, "bob"))[0] == 1

        asyncio.run(asyncio.wait_for(main(), 30))


def test_a_fenced_off_owner_streams_what_the_new_owner_wrote_without_a_gap() -> None:
    async def body(a: Arena, b: Arena) -> None:
        mine = await seated(a)
        watcher = mine.readers.subscribe(None)
        drain_event_seqs(watcher.queue)
        seen = mine.last_seq
        await a.store.renew_leases(LAPSED)
        taken = await b.writer_of(mine.match_id)
        assert isinstance(taken, HostedMatch)
        for _ in range(3):
            await act(taken)
        with pytest.raises(LeaseLost):  # A did not know; its next write is fenced off
            await act(mine)
        streamed = drain_event_seqs(watcher.queue)
        assert streamed == list(range(seen + 1, taken.last_seq + 1))

    with_two_arenas(body)


def test_a_follower_retries_a_catch_up_the_store_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """No later notification may come (the owner may wait on a seat streaming from the
    follower), so a catch-up that fails is retried until it succeeds."""

    async def body(a: Arena, b: Arena) -> None:
        mine = await seated(a)
        followed = await b.get(mine.match_id)
        await act(mine)
        real_read = b.store.read_events
        failures = 2

        async def flaky_read(*args: Any, **kwargs: Any) -> Any:
            nonlocal failures
            if failures:
                failures -= 1
                raise StoreError("postgresql …: the connection was reset")
            return await real_read(*args, **kwargs)

        monkeypatch.setattr(b.store, "read_events", flaky_read)
        replicas(b).changed_elsewhere(mine.match_id, mine.last_seq)  # the notification arrives
        await eventually(lambda: followed.last_seq == mine.last_seq, what="the follower's catch-up")
        assert (failures, followed.last_seq) == (0, mine.last_seq)

    with_two_arenas(body)


def test_a_follower_tells_its_readers_the_move_deadline() -> None:
    async def body(a: Arena, b: Arena) -> None:
        mine = await seated(a, move_ms=60_000)
        followed = await b.get(mine.match_id)
        await act(mine)
        await followed.catch_up()
        turn = followed.your_turn()
        assert turn.seq == mine.last_seq
        assert abs(turn.deadline_unix_ms - mine.your_turn().deadline_unix_ms) < 2_000
        assert followed.snapshot(None).deadline_unix_ms == turn.deadline_unix_ms

    with_two_arenas(body)
