"""An entrant cannot void a duplicate group's remaining rotations by leaving once it has seen
the group's deals (docs/ladders.md, "For the entrant").

The rotations of one seed even out its luck: an entrant that left after the first rotation,
having seen that the deals favoured it, used to have the rotations that hand its cards to the
others voided, and kept the lucky result. Now a group that has begun is played out, and the
seat nobody plays times out and is charged. An in-process server on 127.0.0.1:0; every wait is
bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cardarena.clients.client import ArenaClient
from cardarena.server.hosting.outcome import Outcome
from cardarena.server.ladders.director import DONE, RUNNING, WAITING, Group, begun
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import address_of, channel_to, secret, served
from .test_ladder_half_seated import entrants

CREATOR = "c" * 40


def test_a_group_is_begun_once_a_rotation_has_started_not_when_voided() -> None:
    def group(state: list[str], cancelled: list[bool]) -> Group:
        outcomes = {
            i: Outcome(f"m{i}", (), (), was, (), (), b"", revealed=False)
            for i, was in enumerate(cancelled)
        }
        return Group(0, ("a", "b", "c"), (0, 1, 2), state, outcomes)

    assert not begun(group([WAITING] * 3, []))
    assert not begun(group([DONE, WAITING, WAITING], [True]))  # voided: nobody saw a card
    assert begun(group([RUNNING, WAITING, WAITING], []))
    assert begun(group([DONE, WAITING, WAITING], [False]))
    assert begun(group([DONE, DONE, WAITING], [True, False]))


def test_an_entrant_that_leaves_a_begun_group_is_charged_for_its_rotations(
    data_dir: Path,
) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            ladders = ladder_pb2_grpc.LadderServiceStub(channel)
            keys = {name: secret() for name in ("a", "b", "c")}
            made = lpb.CreateLadderRequest(
                game="triathlon",
                players=3,
                time_control=spb.TimeControl(move_ms=1500),
                fault_policy=tpb.FaultPolicy(forfeit_after=1),
                entrants=[tpb.EntrantSpec(name=n, key=k) for n, k in keys.items()],
                concurrency=1,
                creator_secret=CREATOR,
            )
            made.options.update({"max_deals": 1})
            ladder_id = (await ladders.CreateLadder(made, timeout=RPC)).ladder.ladder_id
            async with ArenaClient(address_of(server), retry_for=10) as client:
                players = entrants(client, ladder_id, [keys["a"], keys["b"]])
                # c enters, is told of the group's first rotation (its deals are now c's
                # to see), and leaves without playing it.
                leaver = ladders.EnterLadder(
                    lpb.EnterLadderRequest(ladder_id=ladder_id),
                    metadata=auth(keys["c"]),
                    timeout=30,
                )
                entered, told = await leaver.read(), await leaver.read()
                assert isinstance(entered, lpb.EnterLadderResponse)
                assert isinstance(told, lpb.EnterLadderResponse)
                assert entered.WhichOneof("kind") == "entered"
                assert told.match.index == 0
                leaver.cancel()

                async def group_counted() -> bool:
                    return (
                        await ladders.GetLadder(ask(ladder_id), timeout=RPC)
                    ).ladder.counted >= 3

                await eventually(group_counted, within=60, what="the group's three rotations")
                info = (await ladders.GetLadder(ask(ladder_id), timeout=RPC)).ladder
                await ladders.CloseLadder(
                    lpb.CloseLadderRequest(ladder_id=ladder_id),
                    metadata=auth(CREATOR),
                    timeout=RPC,
                )
                await asyncio.wait_for(asyncio.gather(*players), 30)
            # Every rotation was played and counted: none voided by c's leaving, and c's
            # seat, played by nobody, forfeited each of them; the others were not charged.
            assert info.counted == 3 and info.voided == 0, info
            rows = {row.player: row for row in info.board}
            assert rows["c"].matches == 3 and rows["c"].forfeits == 3, rows["c"]
            assert rows["a"].forfeits == rows["b"].forfeits == 0, rows

    run(scenario(), 120)


def ask(ladder_id: str) -> lpb.GetLadderRequest:
    return lpb.GetLadderRequest(ladder_id=ladder_id)
