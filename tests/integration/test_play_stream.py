"""The bidirectional Play stream: a whole match played over it, errors answered in-stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc
import pytest

from cardarena.v1 import service_pb2 as spb

from ..calls import auth, prompted, stub
from ..serverproc import ServerProcess

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration


async def play_seat(
    api: MatchServiceAsyncStub,
    match_id: str,
    seat: int,
    token: str,
    results: list[spb.ActionResult],
) -> int:
    """Play one seat over Play, answering each YourTurn; first send one stale action on purpose."""
    outgoing: asyncio.Queue[spb.PlayRequest | None] = asyncio.Queue()
    await outgoing.put(spb.PlayRequest(open=spb.PlayOpen(match_id=match_id, seat=seat)))

    async def requests() -> AsyncIterator[spb.PlayRequest]:
        while (request := await outgoing.get()) is not None:
            yield request

    call = api.Play(requests(), metadata=auth(token))
    stale_sent = False
    last_seq = 0
    async for response in call:
        kind = response.WhichOneof("kind")
        if kind == "event":
            last_seq = response.event.seq
        elif kind == "result":
            results.append(response.result)
        if (prompt := prompted(response)) is None:
            continue
        legal, seq = prompt
        if legal:
            if not stale_sent:
                stale_sent = True
                await outgoing.put(
                    spb.PlayRequest(
                        act=spb.PlayAction(
                            action=legal[0], expected_seq=seq + 99, request_id=f"stale{seat}"
                        )
                    )
                )
            await outgoing.put(
                spb.PlayRequest(
                    act=spb.PlayAction(
                        action=legal[0], expected_seq=seq, request_id=f"s{seat}q{seq}"
                    )
                )
            )
    await outgoing.put(None)
    return last_seq


def test_a_whole_match_over_play_streams(server_process: ServerProcess) -> None:
    async def scenario(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            created = await api.CreateMatch(
                spb.CreateMatchRequest(game="triathlon", seed=bytes(32)), timeout=10
            )
            match_id = created.match.match_id
            tokens = [
                (await api.JoinMatch(spb.JoinMatchRequest(match_id=match_id), timeout=10)).token
                for _ in range(3)
            ]
            results: list[spb.ActionResult] = []
            ends = await asyncio.wait_for(
                asyncio.gather(
                    *(play_seat(api, match_id, s, t, results) for s, t in enumerate(tokens))
                ),
                60,
            )
            final = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)).match
            assert final.status == spb.MATCH_STATUS_ENDED
            assert set(ends) == {final.last_seq}
            stale = [r for r in results if r.request_id.startswith("stale")]
            assert len(stale) == 3 and all(
                r.code == grpc.StatusCode.ABORTED.value[0] for r in stale
            )
            assert all("stale" in r.message for r in stale)
            applied = [r for r in results if not r.request_id.startswith("stale") and r.code == 0]
            assert len(applied) > 100 and all(r.last_seq >= r.first_seq > 0 for r in applied)

    asyncio.run(scenario(server_process.address))


def test_play_needs_an_opening_and_a_token(server_process: ServerProcess) -> None:
    async def scenario(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            created = await api.CreateMatch(spb.CreateMatchRequest(game="triathlon"), timeout=10)

            async def only_action() -> AsyncIterator[spb.PlayRequest]:
                yield spb.PlayRequest(act=spb.PlayAction())

            with pytest.raises(grpc.aio.AioRpcError) as no_open:
                async for _ in api.Play(only_action(), timeout=10):
                    pass
            assert no_open.value.code() == grpc.StatusCode.INVALID_ARGUMENT

            async def opening() -> AsyncIterator[spb.PlayRequest]:
                yield spb.PlayRequest(open=spb.PlayOpen(match_id=created.match.match_id, seat=0))

            with pytest.raises(grpc.aio.AioRpcError) as no_token:
                async for _ in api.Play(opening(), timeout=10):
                    pass
            assert no_token.value.code() == grpc.StatusCode.UNAUTHENTICATED

    asyncio.run(scenario(server_process.address))
