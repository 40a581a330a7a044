"""A stream ends after the match's last entries, not when the match has ended.

The rules end a match (its last action applied, or its cancellation decided) a write before
its last entries are durable and handed to the readers. A stream that woke in between (a Play
result, or any message it was still sending) used to see the match ended, find nothing
queued and close with OK: its reader never got MatchEnded or MatchCancelled, nor the seed.
Here the last write is held at the store while a result wakes the stream."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, cast

import pytest

from cardarena.server.api.limits import ClientHosts
from cardarena.server.api.status import Context
from cardarena.server.api.streams import Streams
from cardarena.server.hosting import Arena, Aside, HostedMatch, Subscriber
from cardarena.server.store import SqliteStore
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..arenas import act, hold_appends

Ending = Callable[[HostedMatch], Coroutine[Any, Any, None]]


async def cancelled(hosted: HostedMatch) -> None:
    await hosted.cancel("cancelled by the operator")


async def played_out(hosted: HostedMatch) -> None:
    await act(hosted)


async def to_the_last_action(hosted: HostedMatch) -> None:
    """Play the lowest legal action until the next one ends the match."""
    while True:
        seat = hosted.engine.to_act
        assert seat is not None
        probe = hosted.engine.clone()
        probe.apply(seat, probe.legal_actions()[0])
        if probe.over:
            return
        await act(hosted)


def kinds(items: list[object]) -> list[str]:
    return [
        item.WhichOneof("kind") or "" if isinstance(item, pb.Event) else type(item).__name__
        for item in items
    ]


@pytest.mark.parametrize(("prepare", "end"), [(None, cancelled), (to_the_last_action, played_out)])
def test_a_stream_woken_while_the_last_write_is_in_flight_still_sends_the_end(
    tmp_path: Path, prepare: Ending | None, end: Ending
) -> None:
    async def scenario() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("triathlon", 3, {}, seed=bytes(32))
            for name in ("a", "b", "c"):
                await hosted.join(None, name)
            if prepare is not None:
                await prepare(hosted)
            readers: list[Subscriber] = []
            seen: list[object] = []
            events = Streams(lambda: None, ClientHosts()).events(
                hosted,
                0,
                hosted.last_seq,
                context=cast(Context, None),  # a seat's stream: its call's address is not read
                on_drop=lambda: None,
                opened=readers.append,
            )

            async def read() -> None:
                async for item in events:
                    seen.append(item.event if hasattr(item, "event") else item)

            reading = asyncio.create_task(read())
            entered, release = hold_appends(store)
            ending = asyncio.create_task(end(hosted))
            await entered.wait()
            assert hosted.ended  # the rules have ended it; its last write is not durable
            [reader] = readers
            reader.offer(Aside(spb.PlayResponse()))  # a result wakes the stream
            for _ in range(20):  # the stream's next steps: it must wait, not end
                await asyncio.sleep(0)
            assert not reading.done(), kinds(seen)
            release.set()
            await ending
            await reading
            assert kinds(seen)[-2:] in (
                ["match_cancelled", "seed_revealed"],
                ["match_ended", "seed_revealed"],
            ), kinds(seen)

    asyncio.run(asyncio.wait_for(scenario(), 60))
