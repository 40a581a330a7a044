"""A ladder match made but not yet seated when its director stopped is seated on recovery.

A director creates a match, then takes its seats. Killed in between (found when a replica
was killed mid-ladder and another took over), the match was left waiting for seats nobody
would take: the board's settled prefix stopped at it, and nothing more was ever counted.
Here the first server stops after the first seat of the first match is taken; the next one
takes the rest, the match is played and its group counted."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament.entrant import LadderEntry, play_entrant
from cardarena.server.ladders import director as director_module
from cardarena.server.tournaments.seating import seat_all as real_seat_all
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc

from ..calls import RPC_TIMEOUT as RPC
from ..calls import run
from ..waiting import eventually
from .support import address_of, channel_to, served
from .test_ladder_reload import create


def entrants(client: ArenaClient, ladder_id: str, keys: Sequence[str]) -> list[asyncio.Task[Any]]:
    return [
        asyncio.create_task(
            play_entrant(
                client,
                ladder_id,
                key,
                lambda _assigned: PythonDecider(RandomBot),
                reconnect_for=10,
                capacity=1,
                ladder=LadderEntry(""),
                log=lambda _text: None,
            )
        )
        for key in keys
    ]


def test_a_match_made_but_not_seated_at_a_stop_is_seated_and_counted_after_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    half_seated: list[str] = []

    async def stops_after_one_seat(arena: Any, match_id: str, joins: Any, elsewhere: Any) -> Any:
        await real_seat_all(arena, match_id, joins[:1], elsewhere)
        half_seated.append(match_id)
        await asyncio.Event().wait()  # the process stops here

    monkeypatch.setattr(director_module, "seat_all", stops_after_one_seat)
    made = create("half", concurrency=1)
    keys = [e.key for e in made.entrants]

    async def before() -> tuple[str, str]:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            api = ladder_pb2_grpc.LadderServiceStub(channel)
            ladder_id = (await api.CreateLadder(made, timeout=RPC)).ladder.ladder_id
            async with ArenaClient(address_of(server), retry_for=10) as client:
                playing = entrants(client, ladder_id, keys)
                await eventually(lambda: half_seated, within=30, what="a match half seated")
                hosted = server.arena.matches[half_seated[0]]
                assert hosted.status == "waiting"
                for task in playing:
                    task.cancel()
                await asyncio.gather(*playing, return_exceptions=True)
            return ladder_id, half_seated[0]

    ladder_id, match_id = run(before(), 60)
    monkeypatch.setattr(director_module, "seat_all", real_seat_all)

    async def after() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            api = ladder_pb2_grpc.LadderServiceStub(channel)

            async def seated() -> bool:
                hosted = server.arena.matches.get(match_id)
                return hosted is not None and hosted.status != "waiting"

            await eventually(seated, within=30, what="the half-seated match seated")
            async with ArenaClient(address_of(server), retry_for=10) as client:
                playing = entrants(client, ladder_id, keys)

                async def counted() -> bool:
                    got = await api.GetLadder(
                        lpb.GetLadderRequest(ladder_id=ladder_id), timeout=RPC
                    )
                    return got.ladder.counted >= 3  # the first group, that match among them

                await eventually(counted, within=60, what="its group counted")
                for task in playing:
                    task.cancel()
                await asyncio.gather(*playing, return_exceptions=True)

    run(after(), 90)
