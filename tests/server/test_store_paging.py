"""Listing stored matches, SQLite and PostgreSQL alike: keyset pages in ``(created_at,
match_id)`` order or newest first, every match once, optionally of one game or status, each
page read along an index rather than sorted from every match."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from cardarena.server.store import EventStore, MatchRecord
from cardarena.server.store.rows import MATCHES
from cardarena.server.store.schema import encode_page_token
from tests.stores import POSTGRES_URL, postgres_schema, record, with_store


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


GAMES = ("triathlon", "hexathlon", "crazy_sixes")
STATUSES = ("running", "ended")


def mixed(count: int) -> list[MatchRecord]:
    """``count`` matches of three games and two statuses, four to a timestamp (the match id
    breaks ties), created in no particular order of their ids."""
    return [
        replace(
            record(
                f"n{(i * 7) % count:02d}",
                created_at=f"2026-01-01T00:00:{i // 4:02d}.000000Z",
                status=STATUSES[i % 2],
            ),
            game=GAMES[(i // 2) % 3],
        )
        for i in range(count)
    ]


async def listing(
    store: EventStore,
    *,
    newest_first: bool,
    page_size: int,
    status: str | None = None,
    game: str | None = None,
) -> list[list[str]]:
    pages: list[list[str]] = []
    token: str | None = None
    while True:
        page, token = await store.list_matches(
            status=status,
            game=game,
            page_size=page_size,
            page_token=token,
            newest_first=newest_first,
        )
        pages.append([m.match_id for m in page])
        assert len(pages) <= 100, "paging does not end"
        if token is None:
            return pages


def test_newest_first_pages_through_every_filter_in_reverse_creation_order(url: str) -> None:
    created = mixed(30)
    by_age = sorted(created, key=lambda r: (r.created_at, r.match_id))

    async def body(store: EventStore) -> None:
        for rec in created:
            await store.create_match(rec)
        for game in (None, *GAMES):
            for status in (None, *STATUSES):
                expected = [
                    r.match_id
                    for r in reversed(by_age)
                    if (game is None or r.game == game) and (status is None or r.status == status)
                ]
                for size in (1, 4, 100):
                    pages = await listing(
                        store, newest_first=True, page_size=size, status=status, game=game
                    )
                    # Every page full but the last: the filters are the query's own.
                    assert all(len(p) == size for p in pages[:-1]), (game, status, size)
                    assert [i for p in pages for i in p] == expected, (game, status, size)
                oldest = await listing(store, newest_first=False, page_size=3, game=game)
                assert [i for p in oldest for i in p] == [
                    r.match_id for r in by_age if game is None or r.game == game
                ]

    with_store(url, body)


def test_a_match_created_while_reading_newest_first_is_on_the_next_listings_first_page(
    url: str,
) -> None:
    created = mixed(12)

    async def body(store: EventStore) -> None:
        for rec in created:
            await store.create_match(rec)
        first, token = await store.list_matches(page_size=5, newest_first=True)
        newer = record("zz-new", created_at="2026-01-02T00:00:00.000000Z")
        await store.create_match(newer)
        rest: list[str] = []
        while token is not None:
            page, token = await store.list_matches(page_size=5, page_token=token, newest_first=True)
            rest.extend(m.match_id for m in page)
        listed = [m.match_id for m in first] + rest
        assert sorted(listed) == sorted(r.match_id for r in created)  # each once, none new
        again, _ = await store.list_matches(page_size=5, newest_first=True)
        assert [m.match_id for m in again] == ["zz-new", *listed[:4]]

    with_store(url, body)


def page_statements() -> list[tuple[str, tuple[object, ...]]]:
    """The statements of every kind of page: each filter, either order, first page or not."""
    seen: list[tuple[str, tuple[object, ...]]] = []

    class Recording:
        def execute(self, sql: str, args: tuple[object, ...] = ()) -> Recording:
            seen.append((sql, tuple(args)))
            return self

        def fetchall(self) -> list[tuple[object, ...]]:
            return []

    token = encode_page_token("2026-01-01T00:00:00.000000Z", "m00")
    for status in (None, "ended"):
        for game in (None, "hexathlon"):
            for descending in (False, True):
                for page_token in (None, token):
                    MATCHES.page(
                        Recording(),
                        filters=[
                            *([] if status is None else [("status = ?", (status,))]),
                            *([] if game is None else [("game = ?", (game,))]),
                        ],
                        page_size=20,
                        page_token=page_token,
                        descending=descending,
                    )
    return seen


def test_every_page_of_matches_is_read_along_an_index_not_sorted_sqlite(
    tmp_path: Path,
) -> None:
    """A page reads its own rows, whatever came before it and whatever the filter: the query
    walks an index in the order asked for, every filter a condition of that index (no sort
    of every matching row first, no row read only to be filtered out)."""
    path = tmp_path / "plans.db"
    with_store(f"sqlite://{path}", lambda store: store.list_matches(page_size=1))
    conn = sqlite3.connect(path)
    try:
        for statement, args in page_statements():
            rows = conn.execute(f"EXPLAIN QUERY PLAN {statement}", args)
            plan = " | ".join(row[3] for row in rows)
            assert "TEMP B-TREE" not in plan and "USING INDEX" in plan, (statement, plan)
            for column in ("status", "game"):
                if f"{column} = ?" in statement:
                    assert f"{column}=?" in plan, (statement, plan)
    finally:
        conn.close()


def test_every_page_of_matches_is_read_along_an_index_not_sorted_postgresql() -> None:
    """As above, on PostgreSQL: with sorting and sequential scans priced out, every page's
    plan is an index scan with no Sort and no Filter (an index serves it whole)."""
    with postgres_schema() as url:
        with_store(url, lambda store: store.list_matches(page_size=1))
        schema = url.rsplit("schema=", 1)[1]
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            conn.execute("SET enable_sort = off")
            conn.execute("SET enable_seqscan = off")
            for statement, args in page_statements():
                rows = conn.execute(f"EXPLAIN {statement.replace('?', '%s')}", args).fetchall()
                plan = " | ".join(row[0] for row in rows)
                assert "Index" in plan, (statement, plan)
                assert "Sort" not in plan and "Filter" not in plan, (statement, plan)
