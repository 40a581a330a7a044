"""A cancelled match's snapshot keeps the position it stopped at, with nobody to act: a fresh
stream's snapshot is its prompt, and nothing can be played in a match that has ended."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cardarena.server.hosting import Arena
from cardarena.server.store import SqliteStore


def test_a_cancelled_match_prompts_nobody(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("triathlon", 3, {}, seed=bytes(32))
            for name in ("a", "b", "c"):
                await hosted.join(None, name)
            seat = hosted.engine.to_act
            assert seat is not None and hosted.snapshot(seat).legal_actions
            hands = [len(h.cards) for h in hosted.snapshot(seat).hands]
            await hosted.cancel("its players left")
            after = hosted.snapshot(seat)
            assert not after.HasField("to_act") and not after.legal_actions
            assert not after.over and [len(h.cards) for h in after.hands] == hands

    asyncio.run(asyncio.wait_for(scenario(), 30))
