"""The move clock and the Turn after a write whose outcome the server could not know (the store
committed, then the answer was lost): the match goes back to its log and finds the write did
land, so the seat now to act starts a new move and must get a full one, and every reader must
be told that deadline. The recovery once published the events with the *previous* seat's
timer still running: the new seat was timed out when the old move would have ended.

The match's clock keeps a time the test moves (:class:`SteppedTime`): the first seat's move
and the end of it pass at once, and once past that end every timer it made due has fired.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.hosting import Arena
from cardarena.server.hosting.clock import MoveClock
from cardarena.server.store import SqliteStore, StoreError
from cardarena.v1 import game_pb2 as pb
from tests.arenas import seat_everyone
from tests.helpers import drain

from .stepped_time import SteppedTime

MOVE_MS = 1_500
SPENT_S = 1.0
"""How long the first seat thinks before acting: most of its move."""


def test_the_seat_after_a_recovered_write_gets_a_full_move_and_readers_are_told_it(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("triathlon", 3, None, move_ms=MOVE_MS)
            stepped = SteppedTime()
            hosted.clock = MoveClock(MOVE_MS, stepped)  # before the deal starts it
            await seat_everyone(hosted)
            watcher = hosted.readers.subscribe(None)
            first = hosted.engine.to_act
            assert first is not None
            await stepped.advance(SPENT_S)  # the first seat uses most of its move
            real_append = store.append

            async def commits_then_fails(*args: Any, **kwargs: Any) -> Any:
                await real_append(*args, **kwargs)
                raise StoreError("connection lost after COMMIT")

            store.append = commits_then_fails  # type: ignore[method-assign]
            before = hosted.last_seq
            with pytest.raises(StoreError):
                await hosted.submit(first, hosted.engine.legal_actions()[0], before, "r1")
            store.append = real_append  # type: ignore[method-assign]
            acted_at = stepped.now()
            assert hosted.last_seq > before  # the write did land, and the match knows it
            second = hosted.engine.to_act
            assert second is not None and hosted.running
            # The seat now to act has a whole move from (about) now ...
            assert hosted.clock.deadline >= acted_at + MOVE_MS / 1000 - 0.2
            # ... and the readers were told that deadline for it, at the new seq.
            items = drain(watcher.queue)
            turns = [item for item in items if isinstance(item, pb.Turn)]
            assert turns and turns[-1].seq == hosted.last_seq and turns[-1].seat == second
            assert turns[-1].deadline_unix_ms >= (acted_at + MOVE_MS / 1000 - 0.2) * 1000
            # And it is not timed out when the first seat's move would have run out.
            seq = hosted.last_seq
            await stepped.advance(MOVE_MS / 1000 - SPENT_S + 0.3)
            assert hosted.last_seq == seq, "the new seat was timed out on the old move's clock"
            hosted.clock.stop()

    asyncio.run(asyncio.wait_for(main(), 30))
