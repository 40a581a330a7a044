"""A crowd of spectators turned away must not come back as one wave, nor stay in memory.

Issue 29's spectators flood: 640 streams wanted of a match that has 64 places, each refused
one asking again a second later. Every ask is a whole gRPC call set up and torn down on the
event loop the players wait for, and the asks came in waves (about 15,000 refusals in 30 s).
Now a spectator refused for want of places hears so after a pause of one to three seconds
(bounded per address and for the server; beyond that at once), and a refused stream ends
without an exception kept on its call: an aborted call held its frames in a cycle that the
collector's oldest generation kept for minutes (+100 MiB a minute under that flood)."""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path

import grpc
import pytest

from cardarena.server.api.limits import PAUSE_SECONDS, RefusalPauses

from ..calls import run, watch_feed
from .support import address_of, channel_to, create_table, served

QUICK = (0.2, 0.2)


def test_a_pause_is_held_for_its_length_and_then_given_back() -> None:
    async def scenario() -> None:
        pauses = RefusalPauses(QUICK)
        started = time.monotonic()
        waiting = asyncio.gather(*(pauses.pause("a") for _ in range(3)))
        await asyncio.sleep(0.05)
        assert pauses.held == 3
        await waiting
        assert time.monotonic() - started >= QUICK[0]
        assert pauses.held == 0

    run(scenario())


def test_pauses_are_bounded_per_address_and_for_the_server() -> None:
    """Beyond its share an address is answered at once: holding calls open is memory, and
    the pauses must not become the flood's way to hold it."""

    async def scenario() -> None:
        pauses = RefusalPauses((5.0, 5.0), per_address=2, total=3)
        held = [asyncio.create_task(pauses.pause("a")) for _ in range(2)]
        await asyncio.sleep(0)
        assert pauses.held == 2
        await asyncio.wait_for(pauses.pause("a"), 1.0)  # its share is taken: at once
        held.append(asyncio.create_task(pauses.pause("b")))
        await asyncio.sleep(0)
        assert pauses.held == 3
        await asyncio.wait_for(pauses.pause("c"), 1.0)  # the server's are taken: at once
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        assert pauses.held == 0, "a cancelled pause gives its place back"

    run(scenario())


def test_a_spectator_refused_for_want_of_places_hears_so_after_a_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with (
            served(tmp_path, watch_streams=1) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            pauses = server.service.streams.pauses
            assert pauses.seconds == PAUSE_SECONDS and PAUSE_SECONDS[0] >= 1.0
            pauses.seconds = (0.5, 0.5)
            table = await create_table(api)
            holder = watch_feed(api, table.match_id)
            await holder.snapshot()
            refused = asyncio.ensure_future(watch_feed(api, table.match_id).snapshot())
            await asyncio.sleep(0.2)
            assert not refused.done() and pauses.held == 1
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await refused
            assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "spectator streams from this address" in (error.value.details() or "")
            assert pauses.held == 0
            holder.cancel()

    run(scenario())


def test_a_refused_stream_leaves_nothing_for_the_collector(tmp_path: Path) -> None:
    """With the collector off, every object of a refused stream's call is freed as the call
    ends: nothing of it waits in a cycle (each cycle kept a call's memory until the next full
    collection, which ``tune_collector`` makes rare)."""

    def contexts() -> int:
        return sum(1 for o in gc.get_objects() if type(o).__name__ == "_ServicerContext")

    async def scenario() -> None:
        async with (
            served(tmp_path, watch_streams=1) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            server.service.streams.pauses.seconds = (0.0, 0.0)
            table = await create_table(api)
            holder = watch_feed(api, table.match_id)
            await holder.snapshot()
            gc.collect()
            before = contexts()
            gc.disable()
            try:
                for _ in range(20):
                    with pytest.raises(grpc.aio.AioRpcError):
                        await watch_feed(api, table.match_id).snapshot()
                await asyncio.sleep(0.2)  # the calls' last callbacks
                left = contexts() - before
            finally:
                gc.enable()
            assert left <= 1, f"{left} refused calls' contexts wait for the collector"
            holder.cancel()

    run(scenario())
