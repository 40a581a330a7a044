"""After an outage no seat is timed before it could be back: the reconnection window.

A restart (or a replica taking a match over) opens one window for the arena: every seat is
awaited until it opens a stream of its own or acts; an awaited seat's turn gets what is left of
the window on top of a full move, and the moment it is back, a full move from then, which its
readers are told. Once the window closes, every clock is the plain move clock again. The
match's clock keeps a time the test moves (:class:`SteppedTime`). The whole path, a ``kill -9``
mid-tournament with a short clock and no fault charged, is
``tests/integration/test_hosted_tournament.py``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.hosting.clock import MoveClock, Reconnection
from cardarena.server.store import SqliteStore
from cardarena.v1 import game_pb2 as pb
from tests.arenas import act, seat_everyone
from tests.helpers import drain

from .stepped_time import SteppedTime

MOVE_MS = 500
GRACE_S = 10.0


async def back_from_an_outage(store: SqliteStore) -> tuple[HostedMatch, SteppedTime]:
    """A seated match on a stepped clock, as the server finds it on coming back: what
    load_unfinished does for each match it resumes (the window opens, every seat awaited)."""
    hosted = await Arena(store).create("triathlon", 3, None, move_ms=MOVE_MS)
    stepped = SteppedTime()
    hosted.clock = MoveClock(MOVE_MS, stepped)
    await seat_everyone(hosted)
    hosted.reconnection = Reconnection(GRACE_S)
    hosted.reconnection.open(stepped.now())
    hosted.await_seats()
    hosted._rearm_clock()
    return hosted, stepped


def test_awaited_seats_wait_out_the_window_and_a_seat_back_gets_a_full_move(
    tmp_path: Path,
) -> None:
    async def main() -> None:

        async with SqliteStore(tmp_path / "store.db") as store:
            hosted, stepped = await back_from_an_outage(store)
            watcher = hosted.readers.subscribe(None)
            first = hosted.engine.to_act
            assert first is not None
            back_at = stepped.now()
            assert hosted.clock.deadline == back_at + GRACE_S + MOVE_MS / 1000

            seq = hosted.last_seq
            await stepped.advance(GRACE_S / 2)  # many moves' worth, the bot still reconnecting
            assert hosted.last_seq == seq, "a seat was timed out while it could not be back"

            hosted.seat_back(first)  # its stream opened: a full move from now, and readers know
            assert hosted.clock.deadline == stepped.now() + MOVE_MS / 1000
            turns = [item for item in drain(watcher.queue) if isinstance(item, pb.Turn)]
            assert turns and turns[-1].deadline_unix_ms == int(hosted.clock.deadline * 1000)

            await act(hosted)  # the next seat is still awaited: the rest of the window is its
            second = hosted.engine.to_act
            assert second is not None and second != first
            window_end = back_at + GRACE_S
            assert hosted.clock.deadline == window_end + MOVE_MS / 1000

            seq = hosted.last_seq
            await stepped.advance(window_end - stepped.now() + MOVE_MS / 1000 + 0.01)
            assert hosted.last_seq > seq, "the window closed and the absent seat's move ran out"
            assert hosted.faults.counts[second] == 1
            assert not hosted.returning, "a closed window awaits nobody"
            hosted.clock.stop()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_no_window_is_open_on_a_server_that_resumed_nothing(tmp_path: Path) -> None:
    async def main() -> None:

        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            assert await arena.resume_unfinished() == 0
            hosted = await arena.create("triathlon", 3, None, move_ms=MOVE_MS)
            await seat_everyone(hosted)
            assert not hosted.returning
            await arena.shutdown()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_restart_awaits_every_seat_of_every_resumed_match(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            hosted = await arena.create("triathlon", 3, None, move_ms=MOVE_MS)
            await seat_everyone(hosted)
            await act(hosted)
            await arena.shutdown()
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            assert await arena.resume_unfinished() == 1
            (resumed,) = arena.matches.values()
            assert resumed.returning == {0, 1, 2}
            grace = arena.reconnection.grace_s
            assert resumed.clock.deadline > resumed.clock.keeper.now() + grace - 1
            await arena.shutdown()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_seat_back_after_the_window_closed_gets_no_more_time_than_it_had(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted, stepped = await back_from_an_outage(store)
            first = hosted.engine.to_act
            assert first is not None
            deadline = hosted.clock.deadline  # the window's end plus a full move
            await stepped.advance(GRACE_S + MOVE_MS / 2000)  # the window closed, the move runs
            hosted.seat_back(first)
            assert hosted.clock.deadline == deadline
            hosted.clock.stop()

    asyncio.run(asyncio.wait_for(main(), 30))
