"""Opening a stream on a match the server does not hold costs a whole replay: an anonymous
caller pays for it at the read gate, the seat's own player does not.

Found by an adversarial review (2026-12-07): Play, StreamEvents and WatchMatch loaded an ended
match the server had let go of (it keeps 1,000) from the store and replayed its log on the
event loop before the caller's token was checked, ungated: 90 anonymous Play opens with a
made-up token took 386 ms of the loop's 492, where GetMatch, which loads the same way, waits
its turn at the gate. ListMatches names every ended match, so anyone could do this in a loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.server.app import Server
from cardarena.v1 import service_pb2 as spb

from ..calls import auth, run
from ..waiting import eventually
from .support import (
    QUICK,
    address_of,
    channel_to,
    create_table,
    gate_held,
    play_hosted_to_end,
    secret,
    served,
    whole,
)

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub


async def ended_and_let_go(server: Server, api: MatchServiceAsyncStub) -> tuple[str, list[str]]:
    """A match played to its end and then dropped from memory, as the server drops ended
    matches past the ones it keeps: its id and its seats' tokens."""
    table = await create_table(api)
    await play_hosted_to_end(server, api, table)
    server.arena.matches.pop(table.match_id)
    server.arena.ended.pop(table.match_id, None)
    return table.match_id, table.tokens


async def waiting_for_ever() -> None:
    await asyncio.Event().wait()


def play_open(api: MatchServiceAsyncStub, match_id: str, seat: int, token: str) -> Any:
    async def requests() -> AsyncIterator[spb.PlayRequest]:
        yield spb.PlayRequest(open=spb.PlayOpen(match_id=match_id, seat=seat))
        await waiting_for_ever()  # the call stays open until the test cancels it

    return api.Play(requests(), metadata=auth(token), timeout=QUICK * 4)


@pytest.mark.parametrize("call", ["Play", "StreamEvents", "WatchMatch"])
def test_an_anonymous_stream_on_a_match_let_go_waits_at_the_gate(data_dir: Path, call: str) -> None:
    async def scenario() -> None:
        async with (
            served(data_dir) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            match_id, _tokens = await ended_and_let_go(server, api)
            made_up = secret()
            stream: Any
            if call == "Play":
                stream = play_open(api, match_id, 0, made_up)
            elif call == "StreamEvents":
                stream = api.StreamEvents(
                    spb.StreamEventsRequest(match_id=match_id, seat=0),
                    metadata=auth(made_up),
                    timeout=QUICK * 4,
                )
            else:
                stream = api.WatchMatch(spb.WatchMatchRequest(match_id=match_id), timeout=QUICK * 4)
            async with gate_held(server) as gate:
                reading = asyncio.ensure_future(stream.read())
                await eventually(lambda: gate.waiting == 1 or None, what="the open queued")
                assert match_id not in server.arena.matches  # not replayed meanwhile
                assert not reading.done()
            if call == "WatchMatch":  # a spectator may watch an ended match, once its turn came
                assert isinstance(await asyncio.wait_for(reading, QUICK), spb.WatchMatchResponse)
                stream.cancel()
            else:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await asyncio.wait_for(reading, QUICK)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            await whole(server.service.guard.reads)

    run(scenario(), 60)


@pytest.mark.parametrize("call", ["Play", "StreamEvents"])
def test_the_seats_own_player_opens_a_match_let_go_without_waiting(
    data_dir: Path, call: str
) -> None:
    async def scenario() -> None:
        async with (
            served(data_dir) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            match_id, tokens = await ended_and_let_go(server, api)
            async with gate_held(server) as gate:  # held for ever, as far as this call knows
                stream: Any
                if call == "Play":
                    stream = play_open(api, match_id, 1, tokens[1])
                else:
                    stream = api.StreamEvents(
                        spb.StreamEventsRequest(match_id=match_id, seat=1),
                        metadata=auth(tokens[1]),
                        timeout=QUICK * 4,
                    )
                first = await asyncio.wait_for(stream.read(), QUICK)
                assert first is not grpc.aio.EOF and first.HasField("snapshot")
                assert first.snapshot.viewer_seat == 1 and gate.waiting == 0
                assert match_id in server.arena.matches
                stream.cancel()

    run(scenario(), 60)
