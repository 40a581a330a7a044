"""Whose turn it is, through the client library: a seat's state knows it (and the move
deadline) from the stream's Turn messages, and ``ArenaClient.watch`` hands a spectator the
snapshot, the events and the turns."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from cardarena.clients.bots import SeatState
from cardarena.clients.client import ArenaClient
from cardarena.v1 import game_pb2 as pb

from ..serverproc import ServerProcess

pytestmark = pytest.mark.integration

MOVE_MS = 600_000


def test_seats_know_whose_turn_and_a_spectator_watches_it(server_process: ServerProcess) -> None:
    async def scenario(address: str) -> tuple[list[Any], list[SeatState], list[str]]:
        async with ArenaClient(address) as client:
            info = await client.create_match(
                "crazy_sixes", players=3, seed=bytes(32), move_ms=MOVE_MS
            )
            watching = asyncio.create_task(_collect(client.watch(info.match_id)))
            tickets = [await client.join(info.match_id, name=f"p{i}") for i in range(3)]
            wrong: list[str] = []

            async def first_legal(state: SeatState) -> int:
                if state.to_act != state.seat:
                    wrong.append(f"seat {state.seat} asked while {state.to_act} is to act")
                if not time.time() * 1000 < state.deadline_unix_ms:
                    wrong.append(f"seat {state.seat} asked with deadline {state.deadline_unix_ms}")
                return state.legal[0]

            states = await asyncio.gather(*(client.play(t, decide=first_legal) for t in tickets))
            return await watching, list(states), wrong

    watched, states, wrong = asyncio.run(scenario(server_process.address))
    assert not wrong, wrong[:5]
    assert all(s.over and (s.to_act, s.deadline_unix_ms) == (None, 0) for s in states)
    assert isinstance(watched[0], pb.Snapshot)
    turns = [m for m in watched if isinstance(m, pb.Turn)]
    events = [m for m in watched if isinstance(m, pb.Event)]
    assert [e.seq for e in events] == list(range(events[0].seq, events[-1].seq + 1))
    assert events[-1].WhichOneof("kind") == "seed_revealed"
    assert turns and not turns[-1].HasField("seat") and turns[-1].seq == events[-1].seq
    # A new hand's opener is told right after its deal (and the passes it forces), before it
    # plays.
    deals = 0
    for at, item in enumerate(watched):
        if isinstance(item, pb.Event) and item.WhichOneof("kind") == "dealt":
            deals += 1
            told = next(m for m in watched[at:] if not isinstance(m, pb.Event))
            assert isinstance(told, pb.Turn) and told.HasField("seat")
    assert deals >= 2


async def _collect(stream: Any) -> list[Any]:
    return [item async for item in stream]
