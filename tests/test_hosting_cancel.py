"""A caller cancelled in the middle of a write (a client hanging up, a forwarding replica
dying) must not leave the match in memory out of step with its log."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.arena import Arena
from cardarena.server.sqlite_store import SqliteStore


def test_a_submit_cancelled_during_its_write_still_lands_whole(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            hosted = await arena.create("triathlon", 3, {})
            for _ in range(3):
                await hosted.join(None, "bot")
            real_append = store.append
            writing, release = asyncio.Event(), asyncio.Event()

            async def slow_append(*args: Any, **kwargs: Any) -> Any:
                writing.set()
                await release.wait()
                return await real_append(*args, **kwargs)

            store.append = slow_append  # type: ignore[method-assign]
            seat = hosted.engine.to_act
            assert seat is not None
            before = hosted.last_seq
            caller = asyncio.create_task(
                hosted.submit(seat, hosted.engine.legal_actions()[0], before, "r1")
            )
            await writing.wait()
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            release.set()
            store.append = real_append  # type: ignore[method-assign]
            async with hosted.lock:  # the write finished behind the cancelled caller
                pass
            assert hosted.last_seq == await store.last_seq(hosted.match_id) > before
            assert hosted.last_hash == await store.last_hash(hosted.match_id)
            # The retry is recognised, and play goes on from the right seq.
            again = await hosted.submit(seat, hosted.engine.legal_actions()[0], before, "r1")
            assert not again.applied and again.first_seq == before + 1
            nxt = hosted.engine.to_act
            assert nxt is not None
            done = await hosted.submit(nxt, hosted.engine.legal_actions()[0], hosted.last_seq, "")
            assert done.applied and done.first_seq == again.last_seq + 1

    asyncio.run(asyncio.wait_for(main(), 30))
