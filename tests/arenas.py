"""Arenas for tests, without a server: two replicas on one PostgreSQL schema, a match hosted
on a SQLite store of its own, and a hosted match seated and played a move at a time through
the hosting layer itself (no RPC)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.store import Owner, SqliteStore
from cardarena.server.store.postgres import PostgresStore
from tests.stores import make_store, postgres_schema

A = Owner("replica-a", "127.0.0.1:1", lease_ms=60_000)
B = Owner("replica-b", "127.0.0.1:2", lease_ms=60_000)
LAPSED = Owner(A.replica, A.address, lease_ms=-1)
"""Renewing with this makes A's leases run out at once: A as if it had died."""


def with_two_arenas(body: Callable[[Arena, Arena], Awaitable[None]]) -> None:
    """Run ``body`` with replicas A and B, each an arena on its own connection to one fresh
    PostgreSQL schema (bounded: 60 s)."""
    with postgres_schema() as url:

        async def main() -> None:
            async with make_store(url) as left, make_store(url) as right:
                assert isinstance(left, PostgresStore)
                await body(Arena(left, owner=A), Arena(right, owner=B))

        asyncio.run(asyncio.wait_for(main(), 60))


@contextlib.asynccontextmanager
async def seated_on_sqlite(
    path: Path,
    game: str = "triathlon",
    players: int = 3,
    options: Mapping[str, Any] | None = None,
    **create: Any,
) -> AsyncIterator[tuple[SqliteStore, HostedMatch]]:
    """A match hosted on a fresh SQLite store at ``path`` (``create``: the keywords of
    ``Arena.create``), every seat taken: its store and the match, for a test of the hosting
    layer alone."""
    async with SqliteStore(path) as store:
        yield store, await seated(Arena(store), game, players, options, **create)


async def seated(
    arena: Arena,
    game: str = "triathlon",
    players: int = 3,
    options: Mapping[str, Any] | None = None,
    **create: Any,
) -> HostedMatch:
    """A match created on ``arena`` (``create``: the keywords of ``Arena.create``), every seat
    taken."""
    hosted = await arena.create(game, players, options, **create)
    await seat_everyone(hosted)
    return hosted


async def seat_everyone(hosted: HostedMatch) -> None:
    """Take every seat (the last join deals)."""
    for _ in range(hosted.record.players):
        await hosted.join(None, "bot")


async def act(hosted: HostedMatch) -> None:
    """The seat to act plays its lowest legal action."""
    seat = hosted.engine.to_act
    assert seat is not None
    await hosted.submit(seat, hosted.engine.legal_actions()[0], hosted.last_seq, "")


def hold_appends(store: SqliteStore) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the store's appends at a gate: the first event is set when one arrives, and each
    waits for the second before it writes (a write in flight, for as long as a test likes)."""
    real_append = store.append
    arrived, release = asyncio.Event(), asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> Any:
        arrived.set()
        await release.wait()
        return await real_append(*args, **kwargs)

    store.append = held  # type: ignore[method-assign]
    return arrived, release
