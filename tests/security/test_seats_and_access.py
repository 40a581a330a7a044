"""Nobody takes a seat reserved for someone else (issue 10, defect 3).

Before the fix every free seat was anyone's: a client polling ListMatches(WAITING) took a
seat in 22 of 24 matches of a real ``cardarena tournament``, making each fail. Now a match
may reserve seats for join secrets, and the tournament runner reserves all of its seats.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import grpc

from cardarena.clients.tournament import TournamentConfig, parse_bot, run_tournament
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import run
from .support import address_of, channel_to, create_table, secret, served
from .support import code_of as refused


def test_a_reserved_seat_takes_its_join_secret(data_dir: Path) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            zero, one = secret(), secret()
            table = await create_table(api, seat_all=False, reserved={0: zero, 1: one})
            match_id = table.match_id
            hosted = server.arena.matches[match_id]

            async def join(**fields: Any) -> spb.JoinMatchResponse:
                response: spb.JoinMatchResponse = await api.JoinMatch(
                    spb.JoinMatchRequest(match_id=match_id, name="x", **fields), timeout=RPC
                )
                return response

            info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id))).match
            assert [s.reserved for s in info.seats] == [True, True, False]

            # Without the secret, with a wrong one, with the other seat's: refused.
            assert await refused(join(seat=0)) == grpc.StatusCode.PERMISSION_DENIED
            assert await refused(join(seat=0, join_secret=secret())) == (
                grpc.StatusCode.PERMISSION_DENIED
            )
            assert await refused(join(seat=0, join_secret=one)) == (
                grpc.StatusCode.PERMISSION_DENIED
            )
            assert await refused(join(join_secret=secret())) == grpc.StatusCode.PERMISSION_DENIED
            assert await refused(join(seat=0, join_secret="short")) == (
                grpc.StatusCode.INVALID_ARGUMENT
            )
            assert all(s.token_hash is None for s in hosted.seats[:2])

            # Anyone may take the open seat, and then no other.
            anyone = await join()
            assert anyone.seat == 2
            assert await refused(join()) == grpc.StatusCode.ALREADY_EXISTS
            assert await refused(join(seat=1)) == grpc.StatusCode.PERMISSION_DENIED

            # The right secret takes its seat, named or not.
            first = await join(seat=0, join_secret=zero)
            second = await join(join_secret=one)
            assert (first.seat, second.seat) == (0, 1)
            assert hosted.status == "running"

            # The reservations are in the hashed start of the log.
            stream = api.WatchMatch(spb.WatchMatchRequest(match_id=match_id))
            events: list[pb.Event] = []
            async for message in stream:
                if message.WhichOneof("kind") == "event":
                    events.append(message.event)
                    if len(events) == 1:
                        break
            stream.cancel()
            assert list(events[0].match_started.reserved_seats) == [True, True, False]

    run(scenario())


def test_a_hostile_client_gets_no_seat_of_a_tournament(data_dir: Path) -> None:
    """A tournament of the reference runner while a hostile client polls ListMatches and
    tries every free seat of every waiting match (by number, as the lowest free seat, and
    with a made-up join secret): every match finishes and the hostile client has no seat."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            taken: list[spb.JoinMatchResponse] = []
            attempts = 0
            seen: set[str] = set()
            done = asyncio.Event()

            async def hostile() -> None:
                nonlocal attempts
                while not done.is_set():
                    listed = await api.ListMatches(
                        spb.ListMatchesRequest(status=spb.MATCH_STATUS_WAITING), timeout=RPC
                    )
                    for info in listed.matches:
                        seen.add(info.match_id)
                        for seat in info.seats:
                            if seat.taken:
                                continue
                            for request in (
                                spb.JoinMatchRequest(
                                    match_id=info.match_id, seat=seat.seat, name="hostile"
                                ),
                                spb.JoinMatchRequest(match_id=info.match_id, name="hostile"),
                                spb.JoinMatchRequest(
                                    match_id=info.match_id, seat=seat.seat, join_secret=secret()
                                ),
                            ):
                                attempts += 1
                                with contextlib.suppress(grpc.aio.AioRpcError):
                                    taken.append(await api.JoinMatch(request, timeout=RPC))

            attacker = asyncio.create_task(hostile())
            try:
                result = await run_tournament(
                    TournamentConfig(
                        address=address_of(server),
                        game="triathlon",
                        bots=[parse_bot(f"r{i}=random") for i in range(3)],
                        options={"max_deals": 1},
                        deals=2,
                        concurrency=2,
                    )
                )
            finally:
                done.set()
                await attacker
            assert len(result.matches) == 6
            assert all(m.ok for m in result.matches), [m.error for m in result.matches]
            assert seen, "the hostile client never saw a waiting match: the test proves nothing"
            assert attempts > 0
            assert not taken, f"the hostile client took {len(taken)} seats"

    run(scenario(), 60)
