"""Ladders in the store, SQLite and PostgreSQL alike: created once, closed once, listed in
keyset pages either way round (newest first too), their groups read a range at a time, and a
closed ladder's kept summary written once (the first writer wins)."""

from __future__ import annotations

import pytest

from cardarena.server.store import EventStore, LadderRecord, StoreConflict
from tests.stores import with_store


def ladder(ladder_id: str, created_at: str) -> LadderRecord:
    return LadderRecord(ladder_id, created_at, b'{"game":"triathlon"}', b"\x02" * 32)


def test_ladders_are_kept_closed_once_listed_both_ways_and_summarised_once(url: str) -> None:
    async def body(store: EventStore) -> None:
        for n in range(5):
            await store.create_ladder(ladder(f"l{n}", f"2026-01-01T00:00:0{n}.000Z"))
        with pytest.raises(StoreConflict):
            await store.create_ladder(ladder("l0", "2026-01-02T00:00:00.000Z"))
        assert await store.close_ladder("l1", "2026-01-03T00:00:00.000Z", "done")
        assert not await store.close_ladder("l1", "2026-01-04T00:00:00.000Z", "again")
        got = await store.get_ladder("l1")
        assert got is not None and got.status == "closed" and got.end_reason == "done"
        assert "secret=" not in repr(got)

        for newest_first, order in ((False, range(5)), (True, range(4, -1, -1))):
            seen, token = [], None
            while True:
                page, token = await store.list_ladders(
                    page_size=2, page_token=token, newest_first=newest_first
                )
                seen += [r.ladder_id for r in page]
                if token is None:
                    break
            assert seen == [f"l{n}" for n in order], (newest_first, seen)
        running, _ = await store.list_ladders(page_size=10, running_only=True, newest_first=True)
        assert [r.ladder_id for r in running] == ["l4", "l3", "l2", "l0"]

        for group in range(4):
            await store.add_ladder_group("l0", group, [f"p{group}", "q"])
        with pytest.raises(StoreConflict):
            await store.add_ladder_group("l0", 2, ["x", "y"])
        assert await store.ladder_groups("l0", 1, 2) == [(1, ["p1", "q"]), (2, ["p2", "q"])]

        await store.keep_summaries("ladder", {"l1": b"first"})
        await store.keep_summaries("ladder", {"l1": b"second", "l0": b"zero"})
        kept = await store.kept_summaries("ladder", ["l0", "l1", "l2"])
        assert kept == {"l0": b"zero", "l1": b"first"}

    with_store(url, body)


def test_a_running_ladder_is_directed_by_one_replica_at_a_time(url: str) -> None:
    """The lease on a ladder: claimed by one replica, refused to another while it is live,
    taken over once it has run out, renewed only by its holder, and none on a closed one."""

    async def body(store: EventStore) -> None:
        for n in range(3):
            await store.create_ladder(ladder(f"l{n}", f"2026-01-01T00:00:0{n}.000Z"))
        await store.close_ladder("l2", "2026-01-03T00:00:00.000Z", "done")
        assert await store.orphaned_ladders() == ["l0", "l1"]
        assert await store.ladder_director("l0") is None
        assert await store.claim_ladder("l0", "a:1", 60_000) == "a:1"
        assert await store.claim_ladder("l0", "b:2", 60_000) == "a:1"
        assert await store.ladder_director("l0") == ("a:1", True)
        assert await store.orphaned_ladders() == ["l1"]
        assert await store.claim_ladder("l2", "a:1", 60_000) == ""  # closed: nobody directs
        assert await store.claim_ladder("nope", "a:1", 60_000) == ""
        assert await store.claim_ladder("l1", "b:2", -1_000) == "b:2"  # run out at once
        assert await store.orphaned_ladders() == ["l1"]
        assert await store.ladder_director("l1") == ("b:2", False)
        assert await store.claim_ladder("l1", "a:1", 60_000) == "a:1"
        assert await store.renew_ladders("a:1", 60_000) == {"l0", "l1"}
        assert await store.renew_ladders("b:2", 60_000) == set()
        await store.close_ladder("l0", "2026-01-03T00:00:00.000Z", "done")
        assert await store.renew_ladders("a:1", 60_000) == {"l1"}
        assert await store.orphaned_ladders() == []

    with_store(url, body)
