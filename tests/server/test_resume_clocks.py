"""A restart starts the resumed matches' move clocks once every match is loaded, not each as it
loads: with thousands to load (seconds), the first ones' seats would spend their move before
the server even listens, and a short clock would time them out with nobody able to act."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.store import SqliteStore
from tests.arenas import act, seat_everyone

MOVE_MS = 60_000
MATCHES = 3


def test_every_clock_starts_after_the_last_match_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"

    async def main() -> None:
        async with SqliteStore(path) as store:
            arena = Arena(store)
            for _ in range(MATCHES):
                hosted = await arena.create("triathlon", 3, {}, move_ms=MOVE_MS)
                await seat_everyone(hosted)
                await act(hosted)
            await arena.shutdown()
        steps: list[str] = []
        load, arm = Arena._load, HostedMatch._rearm_clock

        async def loading(self: Arena, *args: Any) -> HostedMatch:
            steps.append("load")
            return await load(self, *args)

        def arming(self: HostedMatch) -> None:
            steps.append("arm")
            arm(self)

        monkeypatch.setattr(Arena, "_load", loading)
        monkeypatch.setattr(HostedMatch, "_rearm_clock", arming)
        async with SqliteStore(path) as store:
            arena = Arena(store)
            assert await arena.resume_unfinished() == MATCHES
            assert steps == ["load"] * MATCHES + ["arm"] * MATCHES
            assert all(hosted.clock.deadline > 0 for hosted in arena.matches.values())
            await arena.shutdown()

    asyncio.run(asyncio.wait_for(main(), 60))
