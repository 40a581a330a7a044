"""Listing stored matches, SQLite and PostgreSQL alike: keyset pages in ``(created_at,
match_id)`` order, every match once, optionally of one game or status."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cardarena.server.store import EventStore
from tests.stores import record, with_store


def test_a_listing_of_one_game_pages_through_that_games_matches_only(url: str) -> None:
    created = [
        replace(record(f"g{i:02d}", status="ended" if i % 2 else "running"), game=game)
        for i, game in enumerate(["triathlon", "hexathlon", "crazy_sixes"] * 5)
    ]

    async def body(store: EventStore) -> None:
        for rec in created:
            await store.create_match(rec)
        for game in ("triathlon", "hexathlon"):
            for status in (None, "ended"):
                ids: list[str] = []
                token: str | None = None
                while True:
                    page, token = await store.list_matches(
                        status=status, game=game, page_size=2, page_token=token
                    )
                    assert len(page) <= 2 and all(m.game == game for m in page)
                    ids.extend(m.match_id for m in page)
                    if token is None:
                        break
                assert ids == [
                    r.match_id
                    for r in created
                    if r.game == game and (status is None or r.status == status)
                ]
        assert await store.list_matches(game="heptathlon", page_size=5) == ([], None)

    with_store(url, body)


def test_pagination_returns_every_match_once_in_order(url: str) -> None:
    # Five matches share each timestamp, so the match id must break ties.
    created = [
        record(
            f"m{i:02d}",
            created_at=f"2026-01-01T00:00:0{i // 5}.000000Z",
            status=("ended" if i % 3 == 0 else "running"),
        )
        for i in reversed(range(25))
    ]

    async def pages(store: EventStore, status: str | None) -> tuple[list[str], list[int]]:
        ids: list[str] = []
        sizes: list[int] = []
        token: str | None = None
        while True:
            page, token = await store.list_matches(status=status, page_size=10, page_token=token)
            ids.extend(m.match_id for m in page)
            sizes.append(len(page))
            if token is None:
                return ids, sizes

    async def body(store: EventStore) -> None:
        for rec in created:
            await store.create_match(rec)
        ids, sizes = await pages(store, None)
        assert ids == [f"m{i:02d}" for i in range(25)]
        assert sizes == [10, 10, 5]
        running, _ = await pages(store, "running")
        assert running == [f"m{i:02d}" for i in range(25) if i % 3 != 0]
        page, token = await store.list_matches(status="nobody", page_size=10, page_token=None)
        assert (page, token) == ([], None)
        with pytest.raises(ValueError):
            await store.list_matches(page_size=0, page_token=None)

    with_store(url, body)
