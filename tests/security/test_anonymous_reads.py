"""A flood of anonymous reads waits its turn at the read gate and never holds up a player.

Eight callers looping `ListMatches` and `GetMatchLog` kept the event loop busy all the time
and the players' actions waited behind them (issue 29.3: 28x a victim's p99). Now reads
made without the operator token take turns (one at a time, a pause after each, addresses
served in turn); what cannot wait is refused RESOURCE_EXHAUSTED with a retry delay. The
figures are the flood benchmark's (docs/benchmarks.md); here the facts: the flooder is
refused with the right status and trailer, nothing else; the player is never refused; the
operator's reads never wait at the gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc

from cardarena.server.api.access import Access
from cardarena.server.api.reads import ReadGate
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1 import tournament_pb2_grpc

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from .support import address_of, channel_to, create_table, play_hosted_to_end, secret, served

OPERATOR = secret()


def test_a_read_flood_is_refused_with_a_retry_delay_and_the_players_are_not(
    data_dir: Path,
) -> None:
    async def scenario() -> None:
        async with (
            served(data_dir, access=Access(operator_token=OPERATOR)) as server,
            channel_to(address_of(server)) as (channel, api),
        ):
            ended = await create_table(api, metadata=auth(OPERATOR))
            await play_hosted_to_end(server, api, ended)
            table = await create_table(api, metadata=auth(OPERATOR))
            tournaments = tournament_pb2_grpc.TournamentServiceStub(channel)
            reads: list[Callable[[], Awaitable[object]]] = [
                lambda: api.ListMatches(spb.ListMatchesRequest(page_size=100), timeout=RPC),
                lambda: api.GetMatchLog(
                    spb.GetMatchLogRequest(match_id=ended.match_id), timeout=RPC
                ),
                lambda: api.GetMatch(spb.GetMatchRequest(match_id=table.match_id), timeout=RPC),
                lambda: tournaments.ListTournaments(tpb.ListTournamentsRequest(), timeout=RPC),
            ]

            async def flood(n: int) -> tuple[grpc.StatusCode, str | None]:
                try:
                    await reads[n % len(reads)]()
                except grpc.aio.AioRpcError as error:
                    trailers = dict(error.trailing_metadata() or ())
                    retry = trailers.get("cardarena-retry-after-ms")
                    return error.code(), retry if isinstance(retry, str) else None
                return grpc.StatusCode.OK, None

            flooding = asyncio.gather(*(flood(n) for n in range(64)))
            played = await play_hosted_to_end(server, api, table)  # every action answered
            outcomes = await flooding
            assert played > 0
            codes = {code for code, _ in outcomes}
            assert codes <= {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}, codes
            refused = [retry for code, retry in outcomes if code != grpc.StatusCode.OK]
            assert refused, "64 reads at once from one address: more than its share of the queue"
            assert all(retry is not None and int(retry) >= 1 for retry in refused)
            assert sum(code == grpc.StatusCode.OK for code, _ in outcomes) >= 9

            # The operator proves who it is: its reads never wait at the gate.
            gate = server.service.guard.reads
            held = asyncio.Event()
            holding = asyncio.create_task(hold(gate, held))
            await held.wait()
            answers = await asyncio.gather(
                *(
                    api.ListMatches(
                        spb.ListMatchesRequest(page_size=10), metadata=auth(OPERATOR), timeout=RPC
                    )
                    for _ in range(20)
                )
            )
            assert len(answers) == 20
            holding.cancel()
            await asyncio.gather(holding, return_exceptions=True)
            assert gate.waiting == 0

    run(scenario(), 120)


async def hold(gate: ReadGate, held: asyncio.Event) -> None:
    """Hold the gate's turn until cancelled: anonymous reads would wait all that time."""
    async with gate.turn("someone else"):
        held.set()
        await asyncio.Event().wait()
