"""Event stores for tests: SQLite in a temporary folder, or PostgreSQL in a schema of its own.

PostgreSQL is expected at ``CARDARENA_TEST_POSTGRES`` (default the development and CI machines'
``postgresql://postgres@127.0.0.1:5432/test``). Where it is not reachable its tests skip, saying
how to run them, unless ``CARDARENA_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it): then they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest
from psycopg import sql

from cardarena.server.store import CommitHook, EventStore, MatchRecord, open_store

POSTGRES_URL = os.environ.get(
    "CARDARENA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
REQUIRE_POSTGRES = os.environ.get("CARDARENA_REQUIRE_POSTGRES") == "1"
BACKENDS = ("sqlite", "postgresql")


@functools.cache
def postgres_problem() -> str | None:
    """Why PostgreSQL cannot be used here, or ``None`` if it can."""
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0]
    return None


def need_postgres() -> None:
    """Skip (or, where it is required, fail) the calling test without PostgreSQL."""
    problem = postgres_problem()
    if problem is None:
        return
    message = (
        f"PostgreSQL is not reachable at {POSTGRES_URL} ({problem}). Start it, e.g."
        " `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, or point"
        " CARDARENA_TEST_POSTGRES at a database where tests may create schemas."
    )
    if REQUIRE_POSTGRES:
        pytest.fail(message)
    pytest.skip(message)


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A store URL in a new, empty schema that is dropped afterwards."""
    need_postgres()
    schema = f"test_{secrets.token_hex(6)}"
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{separator}schema={schema}"
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextlib.contextmanager
def store_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A URL for a fresh, empty store of ``backend``."""
    if backend == "sqlite":
        yield f"sqlite://{tmp_path / 'store.db'}"
    else:
        with postgres_schema() as url:
            yield url


def make_store(url: str, on_commit: CommitHook | None = None) -> EventStore:
    return open_store(url, data_dir=Path("unused"), on_commit=on_commit)


T = TypeVar("T")

SEED = bytes(range(32))


def record(
    match_id: str, created_at: str = "2026-01-01T00:00:00.000000Z", status: str = "running"
) -> MatchRecord:
    return MatchRecord(
        match_id=match_id,
        created_at=created_at,
        game="hexathlon",
        players=4,
        config=b'{"game":"hexathlon"}',
        seed=SEED,
        commitment="c0ffee",
        status=status,
    )


def with_store(
    url: str,
    body: Callable[[EventStore], Awaitable[T]],
    on_commit: Callable[[int, float], None] | None = None,
) -> T:
    """Run ``body`` against an open store on a fresh event loop (no pytest-asyncio here)."""

    async def main() -> T:
        async with make_store(url, on_commit=on_commit) as store:
            return await body(store)

    return asyncio.run(main())
