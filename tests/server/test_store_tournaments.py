"""Tournaments in the store, SQLite and PostgreSQL alike: created once, ended once (the first
reason stands), listed in pages, running ones found again, secrets kept out of ``repr``."""

from __future__ import annotations

import pytest

from cardarena.server.store import EventStore, StoreConflict, TournamentRecord
from tests.stores import with_store


def tournament(tournament_id: str, created_at: str) -> TournamentRecord:
    return TournamentRecord(
        tournament_id=tournament_id,
        created_at=created_at,
        config=b'{"game":"triathlon"}',
        seed=b"\x01" * 32,
        secret=b"\x02" * 32,
    )


def test_tournaments_are_kept_ended_once_and_listed(url: str) -> None:
    async def body(store: EventStore) -> None:
        for n in range(5):
            await store.create_tournament(tournament(f"t{n}", f"2026-01-01T00:00:0{n}.000Z"))
        with pytest.raises(StoreConflict):
            await store.create_tournament(tournament("t0", "2026-01-02T00:00:00.000Z"))
        assert await store.end_tournament("t1", "2026-01-03T00:00:00.000Z", "played")
        assert not await store.end_tournament("t1", "2026-01-04T00:00:00.000Z", "again")
        assert await store.end_tournament("t2", "2026-01-03T00:00:00.000Z", "no", "cancelled")
        got = await store.get_tournament("t1")
        assert got is not None and got.status == "ended" and got.end_reason == "played"
        assert got.seed == b"\x01" * 32 and got.secret == b"\x02" * 32
        assert "\\x02" not in repr(got) and "secret=" not in repr(got)
        assert await store.get_tournament("nope") is None
        page, token = await store.list_tournaments(page_size=2)
        rest, last = await store.list_tournaments(page_size=10, page_token=token)
        assert [t.tournament_id for t in page + rest] == [f"t{n}" for n in range(5)]
        assert last is None
        running, _ = await store.list_tournaments(page_size=10, running_only=True)
        assert [t.tournament_id for t in running] == ["t0", "t3", "t4"]

    with_store(url, body)
