"""A spectator who finds a match full waits for a place instead of asking again and again.

Issue 29's spectators flood: 640 streams wanted of a match with 64 places, each refused one
asking again a second after its refusal. Said after a pause of 1 to 3 s, the refusals still
came about 180 a second, each a whole gRPC call (about 1.5 ms of server CPU at that rate):
20% of a core and the players' p99 2.2-3.2x quiet. Now one refused for want of a place of
its match waits for one, in a queue of the match, 10 to 20 s: one call per wait, not one per
ask. Pinned here: the queue's order and bounds, a waiter let in when a place frees, told
when its wait is over or that its match ended, and nothing left behind. Every wait is bounded and
nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest

from cardarena.server.api import streams as streams_module
from cardarena.server.api.waiting import WAIT_SECONDS, Waiter, WaitingRoom
from cardarena.server.app import Server
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import Feed, auth, run, watch_feed
from ..waiting import eventually
from .support import Table, address_of, channel_to, create_table, served

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

FAR = 30.0  # a deadline no test reaches


def everyone(waiter: Waiter) -> bool:
    return True


def nobody_holds(address: str) -> int:
    return 0


async def waiter(
    room: WaitingRoom, address: str, *, match_id: str = "m", first: bool = False
) -> asyncio.Task[bool]:
    """A waiting spectator of ``match_id`` from ``address``, in the queue once this returns."""
    task = asyncio.ensure_future(
        room.wait(match_id, address, asyncio.get_running_loop().time() + FAR, first=first)
    )
    await asyncio.sleep(0)
    return task


def test_a_freed_place_wakes_a_waiter_that_may_hold_it_the_oldest_of_its_address() -> None:
    async def scenario() -> None:
        room = WaitingRoom()
        a1, b, a2 = [await waiter(room, host) for host in ("a", "b", "a")]
        assert room.waiting("m") == 3 and room.held == 3
        room.freed("m", everyone, nobody_holds)
        assert await a1 and not b.done()
        # b's address holds all it may there:
        room.freed("m", lambda waiter: waiter.address != "b", nobody_holds)
        assert await a2 and not b.done()
        room.freed("other", everyone, nobody_holds)  # another match's place: not b's
        await asyncio.sleep(0)
        assert not b.done()
        room.freed("m", everyone, nobody_holds)
        assert await b
        assert room.waiting("m") == 0 and room.held == 0

    run(scenario())


def test_a_freed_place_goes_to_the_address_holding_the_fewest_places() -> None:
    """A flood's many waits from an address that holds places already do not stand before a
    newcomer's from one that holds none; among equals, addresses take turns."""

    async def scenario() -> None:
        room = WaitingRoom()
        flood = [await waiter(room, "f") for _ in range(3)]
        other = await waiter(room, "g")
        newcomer = await waiter(room, "n")
        held = {"f": 5, "g": 1, "n": 0}
        room.freed("m", everyone, held.__getitem__)
        assert await newcomer and not any(task.done() for task in [*flood, other])
        held["n"] = 1  # it holds a place now, as g does: g has waited longer
        room.freed("m", everyone, held.__getitem__)
        assert await other
        room.freed("m", everyone, held.__getitem__)
        assert await flood[0] and not flood[1].done()
        for task in flood[1:]:
            task.cancel()
        await asyncio.gather(*flood[1:], return_exceptions=True)
        assert room.waiting("m") == 0 and room.held == 0

    run(scenario())


def test_one_woken_whose_place_was_taken_waits_again_first() -> None:
    async def scenario() -> None:
        room = WaitingRoom()
        later = await waiter(room, "b")
        again = await waiter(room, "a", first=True)
        room.freed("m", everyone, nobody_holds)
        assert await again and not later.done()
        later.cancel()

    run(scenario())


def test_a_wait_ends_at_its_deadline_and_leaves_nothing() -> None:
    async def scenario() -> None:
        room = WaitingRoom()
        loop = asyncio.get_running_loop()
        assert not await room.wait("m", "a", loop.time() + 0.05, first=False)
        assert not await room.wait("m", "a", loop.time() - 1.0, first=False)  # passed already
        assert room.waiting("m") == 0 and room.held == 0 and room.admits("a")

    run(scenario())


def test_waits_are_bounded_per_address_and_for_the_server() -> None:
    """Waits are held calls: a flood may not hold memory through them."""

    async def scenario() -> None:
        room = WaitingRoom(per_address=2, total=3)
        held = [await waiter(room, "a"), await waiter(room, "a")]
        assert not room.admits("a") and room.admits("b")
        held.append(await waiter(room, "b"))
        assert not room.admits("c")
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        assert room.held == 0 and room.admits("a") and room.admits("c")

    run(scenario())


def test_a_woken_waiter_whose_call_is_gone_passes_the_place_on() -> None:
    async def scenario() -> None:
        room = WaitingRoom()
        gone, next_one = await waiter(room, "a"), await waiter(room, "b")
        room.freed("m", everyone, nobody_holds)
        gone.cancel()  # woken, but cancelled before it ran
        with pytest.raises(asyncio.CancelledError):
            await gone
        assert await next_one

    run(scenario())


# --- through the server ---------------------------------------------------------------------


@dataclass
class Full:
    """A served match whose one place of a kind ``holder`` takes."""

    server: Server
    api: MatchServiceAsyncStub
    table: Table
    holder: Feed

    @property
    def waiting(self) -> WaitingRoom:
        return self.server.service.streams.waiting

    async def waiters(self, count: int) -> None:
        match_id = self.table.match_id
        await eventually(lambda: self.waiting.waiting(match_id) == count, what=f"{count} waiting")

    def watch(self, *, batched: bool = True) -> asyncio.Future[pb.Snapshot]:
        """A spectator's first message (or its refusal), asked for now."""
        return asyncio.ensure_future(
            watch_feed(self.api, self.table.match_id, batched=batched).snapshot()
        )


@contextlib.asynccontextmanager
async def full_match(
    tmp_path: Path, *, batched: bool = True, creator_secret: str = ""
) -> AsyncIterator[Full]:
    """A server and a match, and a spectator (``batched`` or not) holding one of its places."""
    async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
        table = await create_table(api, creator_secret=creator_secret)
        holder = watch_feed(api, table.match_id, batched=batched)
        await holder.snapshot()
        try:
            yield Full(server, api, table, holder)
        finally:
            holder.cancel()


async def refused(call: asyncio.Future[pb.Snapshot]) -> str:
    """The details of ``call``'s refusal (RESOURCE_EXHAUSTED)."""
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await asyncio.wait_for(call, RPC)
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    return error.value.details() or ""


def test_a_spectator_of_a_full_match_gets_the_place_its_holder_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams_module, "MATCH_SPECTATORS", 1)

    async def scenario() -> None:
        async with full_match(tmp_path) as full:
            assert full.waiting.seconds == WAIT_SECONDS
            newcomer = full.watch()
            await full.waiters(1)
            assert not newcomer.done()
            full.holder.cancel()
            assert (await asyncio.wait_for(newcomer, RPC)).seq >= 1
            assert full.waiting.held == 0

    run(scenario())


def test_a_wait_that_runs_out_is_refused_with_the_cap_it_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams_module, "MATCH_SPECTATORS", 1)

    async def scenario() -> None:
        async with full_match(tmp_path) as full:
            full.waiting.seconds = 0.2
            details = await refused(full.watch())
            assert "1 spectator streams of this match" in details
            assert "waited up to 0.2 s for a place" in details
            assert full.waiting.held == 0

    run(scenario())


def test_spectators_waiting_for_a_match_that_ends_are_told_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams_module, "MATCH_SPECTATORS", 1)
    monkeypatch.setattr(streams_module, "END_SPREAD", (0.0, 0.05))
    owner = "owner-secret-of-this-test-0123456789"

    async def scenario() -> None:
        async with full_match(tmp_path, creator_secret=owner) as full:
            # One is woken by the place the end frees; the others hear it as their waits end.
            full.waiting.seconds = 0.4
            waiting = [full.watch() for _ in range(3)]
            await full.waiters(3)
            await full.api.CancelMatch(
                spb.CancelMatchRequest(match_id=full.table.match_id, reason="done"),
                metadata=auth(owner),
                timeout=RPC,
            )
            for call in waiting:
                assert "the match ended while this stream waited" in await refused(call)
            assert full.waiting.held == 0
            assert (await full.watch()).seq >= 1  # watched again, it shows its end

    run(scenario())


def test_an_unbatched_spectator_waits_for_an_unbatched_place_and_is_told_to_ask_for_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the match's one unbatched place taken, an unbatched spectator waits; a batched
    spectator leaving does not let it in (it needs an unbatched place), and when its wait is
    over it is told to ask for batches, which lets it in at once."""
    monkeypatch.setattr(streams_module, "MATCH_UNBATCHED_SPECTATORS", 1)

    async def scenario() -> None:
        async with full_match(tmp_path, batched=False) as full:
            full.waiting.seconds = 0.5
            leaving = watch_feed(full.api, full.table.match_id, batched=True)
            await leaving.snapshot()
            unbatched = full.watch(batched=False)
            await full.waiters(1)
            leaving.cancel()  # a batched place: not the one it waits for
            details = await refused(unbatched)
            assert "WatchMatchRequest.batched (ask for it)" in details
            assert "waited up to 0.5 s" in details
            assert full.waiting.held == 0
            assert (await full.watch()).seq >= 1

    run(scenario())


def test_an_unbatched_spectator_gets_the_unbatched_place_its_holder_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams_module, "MATCH_UNBATCHED_SPECTATORS", 1)

    async def scenario() -> None:
        async with full_match(tmp_path, batched=False) as full:
            newcomer = full.watch(batched=False)
            await full.waiters(1)
            full.holder.cancel()
            assert (await asyncio.wait_for(newcomer, RPC)).seq >= 1

    run(scenario())
