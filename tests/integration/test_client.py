"""The client library against a real server: bots play whole matches, even across a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest

from cardarena.clients.bots import RandomBot, SeatState
from cardarena.clients.client import ArenaClient, arena, seatplay
from cardarena.v1 import service_pb2 as spb

from ..serverproc import ServerProcess
from ..waiting import eventually

pytestmark = pytest.mark.integration

Via = Literal["events", "play"]


VIAS = pytest.mark.parametrize("via", ["events", "play"])
"""Each seat on StreamEvents with unary SubmitAction calls, or on one Play call."""


@VIAS
@pytest.mark.parametrize(
    ("game", "players"), [("hexathlon", 4), ("crazy_sixes", 3), ("triathlon", 3)]
)
def test_random_bots_play_a_match_to_the_end(
    server_process: ServerProcess, game: str, players: int, via: Via
) -> None:
    async def scenario(address: str) -> None:
        async with ArenaClient(address) as client:
            info = await client.create_match(game, players=players, seed=bytes(32))
            tickets = [await client.join(info.match_id, name=f"r{i}") for i in range(players)]
            states = await asyncio.gather(
                *(client.play(t, RandomBot(seed=i), via=via) for i, t in enumerate(tickets))
            )
            assert all(s.over for s in states)
            assert len({tuple(s.totals) for s in states}) == 1
            final = await client.get_match(info.match_id)
            assert final.status == spb.MATCH_STATUS_ENDED
            assert [s.seed for s in states] == [bytes(32)] * players
            assert all(s.seq == final.last_seq for s in states)

    asyncio.run(scenario(server_process.address))


@VIAS
def test_play_resumes_across_a_server_restart(tmp_path: Path, via: Via) -> None:
    data = tmp_path / "data"
    first = ServerProcess(data).start()
    address = first.address

    async def scenario() -> None:
        async with ArenaClient(address, retry_for=30) as client:
            info = await client.create_match("pentathlon", players=3)
            tickets = [await client.join(info.match_id) for _ in range(3)]
            plays = [
                asyncio.create_task(client.play(t, RandomBot(seed=t.seat), via=via))
                for t in tickets
            ]

            async def well_under_way() -> bool:
                return (await client.get_match(info.match_id)).last_seq >= 60

            await eventually(well_under_way, within=30, what="60 events")
            first.kill()
            second = ServerProcess(data, listen=address).start()
            try:
                states = await asyncio.wait_for(asyncio.gather(*plays), timeout=60)
                assert all(s.over for s in states)
            finally:
                second.kill()

    asyncio.run(scenario())


@VIAS
def test_quiet_streams_are_reopened_and_play_goes_on(
    server_process: ServerProcess, via: Via, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow thinker leaves the other seats' streams silent for longer than ``quiet_reopen``:
    they reopen from their last seq (over and over), lose nothing and never give up, since a
    quiet stream is no failure however long it lasts (``retry_for`` is shorter still)."""
    reopened = 0

    async def scenario(address: str) -> None:
        nonlocal reopened
        async with ArenaClient(address, quiet_reopen=0.1, retry_for=0.2) as client:
            real_follow = client._follow if via == "events" else seatplay.follow_play

            async def counting_follow(*args: Any) -> None:
                nonlocal reopened
                reopened += 1
                await real_follow(*args)

            if via == "events":
                monkeypatch.setattr(client, "_follow", counting_follow)
            else:
                monkeypatch.setattr(arena, "follow_play", counting_follow)
            info = await client.create_match("triathlon", players=3, seed=bytes(32))
            tickets = [await client.join(info.match_id) for _ in range(3)]
            bot = RandomBot(seed=1)
            moves = 0

            async def slow_thinker(state: SeatState) -> int:
                nonlocal moves
                moves += 1
                if moves <= 3:
                    await asyncio.sleep(0.5)
                return bot.choose(state)

            states = await asyncio.gather(
                client.play(tickets[0], decide=slow_thinker, via=via),
                *(client.play(t, RandomBot(seed=t.seat), via=via) for t in tickets[1:]),
            )
            assert all(s.over for s in states)
            final = await client.get_match(info.match_id)
            assert all(s.seq == final.last_seq for s in states)

    asyncio.run(asyncio.wait_for(scenario(server_process.address), 60))
    assert reopened > 3 + 6  # three seats' first streams, and reopenings while seat 0 thought
