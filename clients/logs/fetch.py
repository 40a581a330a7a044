"""A match log fetched from a server (``GetMatchLog``), with refusals as :class:`LogUnavailable`.

Why one plain call and not :class:`~cardarena.clients.client.ArenaClient`: a command that
reads a log wants the server's answer now (an unknown match, a match not ended, a server not
there), said in one line, not retries for half a minute. It waits only where the server says
when to come back (a busy server's gate for anonymous reads), within its timeout.
"""

from __future__ import annotations

import asyncio

import grpc

from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc

from ..client.channel import CHANNEL_OPTIONS, channel_target, retry_after
from .files import LogUnavailable

FETCH_TIMEOUT_S = 30.0


async def fetch_log(
    address: str, match_id: str, *, timeout: float = FETCH_TIMEOUT_S
) -> spb.GetMatchLogResponse:
    """``GetMatchLog`` from a server; refusals (unknown match, not ended, unreachable) raise
    :class:`LogUnavailable` with the status code and the server's message."""
    async with grpc.aio.insecure_channel(
        channel_target(address), options=CHANNEL_OPTIONS
    ) as channel:
        api = service_pb2_grpc.MatchServiceStub(channel)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                return await api.GetMatchLog(
                    spb.GetMatchLogRequest(match_id=match_id), timeout=timeout
                )
            except grpc.aio.AioRpcError as error:
                told = retry_after(error)  # a busy server's gate: it says when to come back
                if told is None or loop.time() + told > deadline:
                    raise LogUnavailable(
                        f"{address}: cannot fetch the log of match {match_id!r}: "
                        f"{error.code().name}: {error.details()}"
                    ) from None
            await asyncio.sleep(told)
