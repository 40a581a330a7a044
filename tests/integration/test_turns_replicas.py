"""Whose turn it is, from a replica that does not write the match: its spectators get the
same Turns as the owner's (each move's seat, at the same seqs), with its estimate of the move
deadline, a few milliseconds after the owner's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT, STREAM_TIMEOUT, create, join_all, run, seat_player, stub
from .test_replicas import running_replicas

pytestmark = pytest.mark.integration

MOVE_MS = 600_000
ESTIMATE_SLACK_MS = 5_000
"""How much later than the owner's a follower's deadline may be (it reads the owner's writes
when the store notifies it: milliseconds, seconds on a busy machine)."""


async def turns_of(call: Any) -> list[pb.Turn]:
    out: list[pb.Turn] = []
    while True:
        message = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
        if message is grpc.aio.EOF:
            return out
        if message.HasField("turn"):
            out.append(message.turn)


def test_a_follower_tells_its_spectators_whose_turn_it_is(tmp_path: Path) -> None:
    with running_replicas(tmp_path, 2) as (_, (owner, follower)):

        async def scenario() -> tuple[list[pb.Turn], list[pb.Turn]]:
            async with (
                grpc.aio.insecure_channel(owner.address) as near,
                grpc.aio.insecure_channel(follower.address) as far,
            ):
                api = stub(near)
                info = await create(api, "crazy_sixes", 3, seed=bytes(32), move_ms=MOVE_MS)
                request = spb.WatchMatchRequest(match_id=info.match_id)
                watchers = [s.WatchMatch(request, timeout=STREAM_TIMEOUT) for s in (api, stub(far))]
                for call in watchers:  # both open (their snapshots read) before the first deal
                    first = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
                    assert isinstance(first, spb.WatchMatchResponse) and first.HasField("snapshot")
                reading = asyncio.gather(*(turns_of(call) for call in watchers))
                tokens = await join_all(api, info.match_id, 3)
                await asyncio.gather(
                    *(seat_player(api, info.match_id, s, t) for s, t in enumerate(tokens))
                )
                near_turns, far_turns = await reading
                return near_turns, far_turns

        near, far = run(scenario(), seconds=120)
    assert len(near) > 20
    # The follower reads the owner's writes in batches as the store notifies it: one Turn per
    # batch, each at a seq the owner told too, with the same seat.
    told = {t.seq: t for t in near}
    assert far and all(t.seq in told for t in far), "a Turn at a seq the owner never told"
    for turn in far:
        mine = told[turn.seq]
        assert (turn.HasField("seat"), turn.seat) == (mine.HasField("seat"), mine.seat)
        if turn.HasField("seat"):
            late = turn.deadline_unix_ms - mine.deadline_unix_ms
            assert -50 <= late < ESTIMATE_SLACK_MS, (turn, mine)
    assert far[-1] == near[-1] and not far[-1].HasField("seat"), "both end with nobody to act"
