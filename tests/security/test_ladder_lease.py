"""A replica that loses a ladder's lease while alive (another replica holds it, say after this
one was paused past it) stops scheduling the ladder at once: its entrants' streams end
(UNAVAILABLE, "enter again"), a new entry is refused naming the director, and a read is asked
of the director (here unreachable: UNAVAILABLE). Once that lease runs out in turn, the replica
takes the ladder back. An in-process replica on a scratch PostgreSQL schema; every wait is
bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import psycopg
from psycopg import sql

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from tests.stores import POSTGRES_URL, postgres_schema

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import address_of, channel_to, failure, secret, served

ELSEWHERE = "127.0.0.1:9"
"""The replica said to hold the lease: nobody listens there."""
NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"


def set_lease(url: str, director: str, until: str) -> None:
    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(
            sql.SQL("UPDATE {}.ladder_directors SET director = %s, until_ms = {}").format(
                sql.Identifier(schema), sql.SQL(until)
            ),
            (director,),
        )


def test_a_replica_that_loses_a_ladders_lease_lets_it_go_and_takes_it_back(
    data_dir: Path,
) -> None:
    with postgres_schema() as url:

        async def scenario() -> None:
            async with (
                served(data_dir, store=url) as server,
                channel_to(address_of(server)) as (channel, _),
            ):
                api = ladder_pb2_grpc.LadderServiceStub(channel)
                made = lpb.CreateLadderRequest(
                    game="triathlon",
                    time_control=spb.TimeControl(move_ms=60_000),
                    entrants=[tpb.EntrantSpec(name=n, key=secret()) for n in ("a", "b", "c")],
                )
                ladder_id = (await api.CreateLadder(made, timeout=RPC)).ladder.ladder_id
                key = made.entrants[0].key

                def enter() -> grpc.aio.UnaryStreamCall[
                    lpb.EnterLadderRequest, lpb.EnterLadderResponse
                ]:
                    return api.EnterLadder(
                        lpb.EnterLadderRequest(ladder_id=ladder_id), metadata=auth(key), timeout=30
                    )

                stream = enter()
                first = await stream.read()
                assert isinstance(first, lpb.EnterLadderResponse)
                assert first.WhichOneof("kind") == "entered"

                # Another replica holds the lease now, for ten minutes.
                set_lease(url, ELSEWHERE, f"{NOW_MS} + 600000")  # a moment of the loop
                ended = await asyncio.wait_for(failure(stream.read()), 15)
                assert ended.code() == grpc.StatusCode.UNAVAILABLE
                assert "another replica directs this ladder now" in (ended.details() or "")
                assert ladder_id not in server.ladders.directors
                refused = await failure(enter().read())
                assert refused.code() == grpc.StatusCode.UNAVAILABLE
                assert f"directed by the replica at {ELSEWHERE}" in (refused.details() or "")
                asked = await failure(
                    api.GetLadder(lpb.GetLadderRequest(ladder_id=ladder_id), timeout=RPC)
                )
                assert asked.code() == grpc.StatusCode.UNAVAILABLE

                # That lease runs out: this replica takes the ladder back.
                set_lease(url, ELSEWHERE, "0")

                async def back() -> bool:
                    return ladder_id in server.ladders.directors

                await eventually(back, within=15, what="the ladder taken back")
                again = enter()
                entered = await again.read()
                assert isinstance(entered, lpb.EnterLadderResponse)
                assert entered.WhichOneof("kind") == "entered"
                again.cancel()

        run(scenario(), 60)
