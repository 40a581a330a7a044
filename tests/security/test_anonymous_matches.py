"""Anonymously created matches: a budget per address and one for the whole server.

The per-address create rate let 40 addresses create 12,842 matches in seconds on an open
server (issue 29.2): each holds memory and a row until it ends. Now an open server counts
the matches each address created until each ends, shares a server-wide budget fairly among
them, and ends an untimed match left without a move (its creator may have taken every seat:
counting only the matches still waiting let such a creator hold as many as it liked).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.api.access import Access
from cardarena.server.api.anonymous import AnonymousMatches
from cardarena.server.api.limits import FAIR_FLOOR
from cardarena.server.api.status import Refused
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import (
    address_of,
    channel_to,
    code_of,
    create_table,
    play_lowest,
    secret,
    served,
)


def fill(budget: AnonymousMatches, address: str) -> int:
    """How many matches ``address`` may hold before it is refused."""
    made = 0
    while True:
        try:
            budget.check(address)
        except Refused as refused:
            assert refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            return made
        budget.add(address, f"{address}/{made}")
        made += 1


def test_the_server_wide_budget_is_shared_and_leaves_room_for_newcomers() -> None:
    budget = AnonymousMatches(lambda match_id: True, per_address=64, total=16)
    assert fill(budget, "10.0.0.1") == 8  # alone, half: the rest is for whoever comes next
    assert fill(budget, "10.0.0.2") == FAIR_FLOOR
    assert fill(budget, "10.0.0.3") == FAIR_FLOOR
    assert fill(budget, "10.0.0.4") == 0  # all 16 are taken
    with pytest.raises(Refused, match="from all addresses"):
        budget.check("10.0.0.4")


def test_a_match_that_ended_no_longer_counts() -> None:
    ended: set[str] = set()
    budget = AnonymousMatches(lambda match_id: match_id not in ended, per_address=3)
    assert fill(budget, "10.0.0.1") == 3
    ended.add("10.0.0.1/1")
    budget.check("10.0.0.1")  # one place again
    budget.add("10.0.0.1", "10.0.0.1/3")
    assert budget.counted == 3
    with pytest.raises(Refused, match="created 3 matches not yet ended"):
        budget.check("10.0.0.1")


def test_an_open_server_counts_a_match_until_it_ends_not_until_it_starts(
    data_dir: Path,
) -> None:
    """Before: a match stopped counting once every seat was taken, so a creator that took
    the seats of its own untimed matches (from the same address) held as many as it liked,
    running for ever."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            server.service.anonymous.per_address = 3
            owner = secret()
            tables = [await create_table(api, creator_secret=owner) for _ in range(2)]
            await create_table(api, seat_all=False)
            assert all(server.arena.matches[t.match_id].status == "running" for t in tables)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await create_table(api, seat_all=False)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "3 matches not yet ended" in (refused.value.details() or "")
            # Cancelled by its creator, a running match ends and makes room.
            await api.CancelMatch(
                spb.CancelMatchRequest(match_id=tables[0].match_id, reason="done"),
                metadata=auth(owner),
                timeout=RPC,
            )
            await create_table(api, seat_all=False)
            assert server.service.anonymous.counted == 3
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await create_table(api, seat_all=False)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    run(scenario(), 60)


def test_the_budget_is_set_by_the_serve_flag(data_dir: Path) -> None:
    async def scenario() -> None:
        access = Access(anonymous_matches=(2, 10))
        async with served(data_dir, access=access) as server:
            budget = server.service.anonymous
            assert (budget.per_address, budget.total) == (2, 10)

    run(scenario(), 30)


def test_creates_in_flight_hold_their_places_and_a_failed_one_gives_its_back() -> None:
    budget = AnonymousMatches(lambda match_id: True, per_address=3)
    with contextlib.ExitStack() as flight:
        named = [flight.enter_context(budget.creating("10.0.0.1")) for _ in range(3)]
        with pytest.raises(Refused, match="created 3 matches"), budget.creating("10.0.0.1"):
            pass  # three creates are under way: a fourth may not start
        assert budget.counted == 3
        with pytest.raises(ValueError), budget.creating("10.0.0.2"):
            raise ValueError("the create failed")
        assert budget.counted == 3  # the failed create's place is back
        for n, name in enumerate(named):
            name(f"m{n}")
    assert budget.counted == 3
    with pytest.raises(Refused):
        budget.check("10.0.0.1")
    with budget.creating(None) as name:  # a proven caller's is never counted
        name("operator's")
    assert budget.counted == 3


def test_concurrent_creates_from_one_address_stop_at_its_budget(data_dir: Path) -> None:
    """Before: every create in flight passed the check, none of them counted yet, so 300
    creates at once over 10 connections left 21 to 25 waiting where 20 were allowed."""

    async def scenario() -> None:
        async with served(data_dir) as server, contextlib.AsyncExitStack() as stack:
            server.service.anonymous.per_address = 20
            apis = [
                (await stack.enter_async_context(channel_to(address_of(server))))[1]
                for _ in range(10)
            ]
            outcomes = await asyncio.gather(
                *(create_table(apis[n % 10], seat_all=False) for n in range(300)),
                return_exceptions=True,
            )
            made = [o for o in outcomes if not isinstance(o, BaseException)]
            refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
            assert len(made) + len(refused) == 300
            assert {e.code() for e in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
            assert len(made) == 20
            assert server.service.anonymous.counted == 20
            waiting = [m for m in server.arena.matches.values() if m.status == "waiting"]
            assert len(waiting) == 20

    run(scenario(), 60)


def test_a_retried_create_at_the_budget_returns_its_match(data_dir: Path) -> None:
    """A create whose answer was lost is retried with its request id (the reference client
    does): at its address's budget, the retry still returns the match its first attempt
    made, which counts once. Before: refused RESOURCE_EXHAUSTED, with no retry delay, so
    the client gave up on a match that stood waiting for an hour."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            server.service.anonymous.per_address = 2
            requests = [
                spb.CreateMatchRequest(game="triathlon", players=3, request_id=secret())
                for _ in range(3)
            ]
            made = [
                (await api.CreateMatch(request, timeout=RPC)).match.match_id
                for request in requests[:2]
            ]
            again = await api.CreateMatch(requests[1], timeout=RPC)
            assert again.match.match_id == made[1]
            assert server.service.anonymous.counted == 2
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await api.CreateMatch(requests[2], timeout=RPC)  # a new match: over budget
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            reused = spb.CreateMatchRequest(
                game="triathlon",
                players=3,
                request_id=requests[0].request_id,
                time_control=spb.TimeControl(move_ms=5000),
            )
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await api.CreateMatch(reused, timeout=RPC)  # its id, other settings: no match
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            assert server.service.anonymous.counted == 2
            assert sum(m.status == "waiting" for m in server.arena.matches.values()) == 2

    run(scenario(), 30)


def test_a_bot_host_creating_and_joining_200_matches_at_once_is_never_refused(
    data_dir: Path,
) -> None:
    """As scripts/bench sets up: one address creates 200 matches at once, then takes every
    seat of them: all 200 run together, within the address's 256, and count until they end.
    """

    async def scenario() -> None:
        async with served(data_dir) as server, contextlib.AsyncExitStack() as stack:
            apis = [
                (await stack.enter_async_context(channel_to(address_of(server))))[1]
                for _ in range(4)
            ]
            tables = await asyncio.gather(
                *(create_table(apis[n % 4], seat_all=False) for n in range(200))
            )
            await asyncio.gather(
                *(
                    apis[n % 4].JoinMatch(
                        spb.JoinMatchRequest(
                            match_id=table.match_id, seat=seat, name="bot", token=secret()
                        ),
                        timeout=RPC,
                    )
                    for n, table in enumerate(tables)
                    for seat in range(table.players)
                )
            )
            assert all(server.arena.matches[t.match_id].status == "running" for t in tables)
            assert server.service.anonymous._prune_all() == 200  # running: still counted

    run(scenario(), 60)


def test_a_create_whose_call_ends_before_its_answer_still_counts(data_dir: Path) -> None:
    """The match of a CreateMatch cancelled or past its deadline mid-way is still made (the
    store's work runs to its end), so it must count as well. Before: its place was given
    back as the call ended and the match made afterwards was never counted, so a client
    with a deadline shorter than a create left as many matches waiting as it liked."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            budget = server.service.anonymous
            budget.per_address = 2
            store = server.arena.store
            create_match = store.create_match
            slow = asyncio.Event()

            async def held(*args: Any, **kwargs: Any) -> Any:
                await slow.wait()
                return await create_match(*args, **kwargs)

            store.create_match = held  # type: ignore[method-assign]
            try:
                request = spb.CreateMatchRequest(game="triathlon", players=3)
                codes: list[grpc.StatusCode] = []
                for _ in range(3):  # the calls end, their creates are still under way
                    codes += await asyncio.gather(
                        *(code_of(api.CreateMatch(request, timeout=0.3)) for _ in range(4))
                    )
                assert grpc.StatusCode.DEADLINE_EXCEEDED in codes, codes
                assert set(codes) <= {
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                }
                slow.set()

                def waiting() -> int:
                    return sum(m.status == "waiting" for m in server.arena.matches.values())

                await eventually(lambda: waiting() >= 2 or None, what="the held creates done")
                await asyncio.sleep(0.1)
                assert waiting() == 2
                assert budget.counted == 2
                assert await code_of(api.CreateMatch(request, timeout=RPC)) == (
                    grpc.StatusCode.RESOURCE_EXHAUSTED
                )
            finally:
                store.create_match = create_match  # type: ignore[method-assign]

    run(scenario(), 30)


def test_an_untimed_match_left_without_a_move_is_cancelled_and_stops_counting(
    data_dir: Path,
) -> None:
    """The other half of counting a match until it ends: an untimed match its players
    left would never end. A timed one moves on by its clock, and a waiting one expires by
    the waiting rule (an hour here), so neither is touched; a move keeps a match alive."""

    async def scenario() -> None:
        async with (
            served(data_dir, idle_expiry=0.6) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            left = await create_table(api)
            timed = await create_table(api, move_ms=60_000)
            waiting = await create_table(api, seat_all=False)
            assert server.service.anonymous.counted == 3
            hosted = server.arena.matches[left.match_id]
            before = hosted.last_written
            await play_lowest(server, api, left)
            assert hosted.last_written > before  # a write is a sign of life
            await eventually(lambda: hosted.ended or None, what="the idle match cancelled")
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=left.match_id), timeout=RPC)
            kinds = [pb.Event.FromString(e.event).WhichOneof("kind") for e in log.entries]
            assert kinds[-2:] == ["match_cancelled", "seed_revealed"]
            reason = pb.Event.FromString(log.entries[-2].event).match_cancelled.reason
            assert reason == "expired: no move for 0.6 s"
            assert server.arena.matches[timed.match_id].status == "running"
            assert server.arena.matches[waiting.match_id].status == "waiting"
            assert server.service.anonymous._prune_all() == 2

    run(scenario(), 30)
