"""A ladder on two replicas sharing a PostgreSQL store: one replica directs it (a lease, as a
tournament's), the other answers its reads by asking the director and sends its entrants
there; killed (SIGKILL), the director's lease runs out, the other replica takes the
scheduling over from the store, its entrants enter there, and the ladder carries on to a
board whose snapshot audits clean."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.cli import main
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament.entrant import EntrantReport, LadderEntry, play_entrant
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..waiting import eventually
from .test_replicas import running_replicas

pytestmark = pytest.mark.integration

NAMES = ("a", "b", "c", "d")
CREATOR = "c" * 40


def test_a_ladder_is_directed_by_one_replica_and_taken_over_when_it_dies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_replicas(tmp_path, 2) as (_, (first, second)):

        async def scenario() -> lpb.LadderInfo:
            async with (
                ArenaClient(first.address) as at_first,
                ArenaClient(second.address, retry_for=60) as at_second,
            ):
                request = lpb.CreateLadderRequest(
                    game="triathlon",
                    players=3,
                    time_control=spb.TimeControl(move_ms=10_000),
                    entrants=[tpb.EntrantSpec(name=n) for n in NAMES],
                    concurrency=3,
                    creator_secret=CREATOR,
                )
                created = await at_first.ladders.create(request)
                ladder_id = created.ladder.ladder_id
                keys = dict(zip(NAMES, created.entrant_keys, strict=True))

                # The other replica does not direct it: it answers reads from the director,
                # and sends entrants there.
                seen = await at_second.ladders.get(ladder_id)
                assert seen.ladder_id == ladder_id and seen.status == lpb.LADDER_STATUS_RUNNING
                listed = await at_second.ladders.stub.ListLadders(lpb.ListLaddersRequest())
                assert [i.ladder_id for i in listed.ladders] == [ladder_id]
                refused = at_second.ladders.enter(ladder_id, keys["a"])
                with pytest.raises(grpc.aio.AioRpcError) as elsewhere:
                    await refused.read()
                assert elsewhere.value.code() == grpc.StatusCode.UNAVAILABLE
                assert f"directed by the replica at {first.address}" in str(
                    elsewhere.value.details()
                )

                def entrants(
                    client: ArenaClient, patience: float
                ) -> list[asyncio.Task[EntrantReport]]:
                    def make(_assigned: tpb.MatchAssigned) -> PythonDecider:
                        return PythonDecider(RandomBot)

                    return [
                        asyncio.create_task(
                            play_entrant(
                                client,
                                ladder_id,
                                keys[name],
                                make,
                                reconnect_for=patience,
                                capacity=2,
                                ladder=LadderEntry(""),
                                log=lambda _text: None,
                            )
                        )
                        for name in NAMES
                    ]

                async def counted(client: ArenaClient, at_least: int) -> bool:
                    return (await client.ladders.get(ladder_id)).counted >= at_least

                before = entrants(at_first, 2.0)
                await eventually(lambda: counted(at_first, 6), within=60, what="6 counted")
                first.kill()  # its lease runs out; the other replica takes the ladder over
                await asyncio.gather(*before, return_exceptions=True)
                after = entrants(at_second, 60.0)
                was = (await at_second.ladders.get(ladder_id)).counted
                await eventually(
                    lambda: counted(at_second, was + 9), within=90, what="counted at the other"
                )
                await at_second.ladders.close(ladder_id, secret=CREATOR)
                reports = await asyncio.wait_for(asyncio.gather(*after), 60)
                assert all(r.final is not None for r in reports)

                async def final() -> lpb.LadderInfo | None:
                    info = await at_second.ladders.get(ladder_id)
                    done = info.counted == info.scheduled and not info.running
                    return info if done else None

                return await eventually(final, within=60, what="every match counted")

        info = asyncio.run(asyncio.wait_for(scenario(), 240))
        assert info.status == lpb.LADDER_STATUS_CLOSED and info.counted >= 15
        assert {row.player for row in info.board} == set(NAMES)
        snapshot = tmp_path / "snapshot.json"
        out = ["ladder", "snapshot", info.ladder_id, "--server", second.address]
        assert main([*out, "--out", str(snapshot)]) == 0
        assert main(["audit", "--ladder", str(snapshot)]) == 0
        said = capsys.readouterr().out
        assert "all clean" in said, said
