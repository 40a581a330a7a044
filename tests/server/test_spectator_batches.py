"""A batched spectator (``WatchMatchRequest.batched``) gets every message an unbatched one
gets, in order and once each, nested in far fewer: the history in runs, the live messages
gathered while its stream waits a frame after each. Unbatched spectators, which cost
a match one message an event, have a few places of their own per match.

Why: issue 29's flood of spectators. Each spectator's message costs the event loop about
40 µs, which the match's players wait for; a match of bots makes hundreds of events a second,
so 64 spectators one message an event each held the victim's p99 at 4 to 8 times its quiet
figure."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.api import streams as streams_module
from cardarena.server.api.limits import ClientHosts
from cardarena.server.api.status import Refused
from cardarena.server.api.streams import MATCH_UNBATCHED_SPECTATORS, Streams, response
from cardarena.server.hosting import Told, runs
from cardarena.server.hosting.subscribers import BATCH_EVENTS
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import STREAM_TIMEOUT, run
from ..security.support import (
    address_of,
    channel_to,
    create_table,
    play_hosted_to_end,
    play_lowest,
    served,
)
from ..security.test_shared_caps import Caller


def event(seq: int) -> pb.Event:
    return pb.Event(seq=seq, trick_won=pb.TrickWon(seat=seq % 3))


def turn(seq: int, seat: int) -> pb.Turn:
    return pb.Turn(seq=seq, seat=seat, deadline_unix_ms=1000 + seq)


def messages(items: list[Any]) -> list[spb.WatchMatchResponse]:
    """What a spectator's stream would send for ``items``: their bytes, parsed."""
    out = []
    for item in items:
        made = response(spb.WatchMatchResponse, item)
        assert isinstance(made, bytes)
        out.append(spb.WatchMatchResponse.FromString(made))
    return out


def unbatched(sent: list[spb.WatchMatchResponse]) -> list[spb.WatchMatchResponse]:
    """Each message (without what it nests), then those nested in it, as a client reads them."""
    out = []
    for message in sent:
        first = spb.WatchMatchResponse()
        first.CopyFrom(message)
        first.ClearField("more")
        out += [first, *message.more]
    return out


def flattened(sent: list[spb.WatchMatchResponse]) -> list[int]:
    return [m.event.seq for m in unbatched(sent) if m.HasField("event")]


def test_a_run_is_the_messages_an_unbatched_stream_sends_nested_in_one() -> None:
    items = [
        Told(event(1), turn(1, 0)),
        Told(None, turn(1, 2)),  # the clock restarted with no event
        Told(event(2), None),
        Told(event(3), turn(3, 1)),
    ]
    [only] = messages(runs(items))
    alone = messages(items)
    assert unbatched([only]) == alone, "every message as it is, turns and all"
    assert not any(m.more for m in only.more)
    lone = Told(event(7), turn(7, 2))
    assert runs([lone]) == [lone]  # one message: the shared Told itself, bytes made once
    assert runs([]) == []


def test_many_messages_are_cut_into_runs_of_at_most_batch_events() -> None:
    count = BATCH_EVENTS * 2 + 3
    items = [Told(event(seq), turn(seq, seq % 3)) for seq in range(1, count + 1)]
    sent = messages(runs(items))
    assert [1 + len(m.more) for m in sent] == [BATCH_EVENTS, BATCH_EVENTS, 3]
    assert unbatched(sent) == messages(items)


def test_unbatched_spectators_of_a_match_have_places_of_their_own() -> None:
    streams = Streams(lambda: None, ClientHosts())
    with contextlib.ExitStack() as stack:
        for n in range(MATCH_UNBATCHED_SPECTATORS):
            stack.enter_context(streams.watching(Caller(f"10.0.0.{n}"), "m1", batched=False))  # type: ignore[arg-type]
        with pytest.raises(Refused, match=r"without WatchMatchRequest\.batched"):
            stack.enter_context(streams.watching(Caller("10.0.1.1"), "m1", batched=False))  # type: ignore[arg-type]
        stack.enter_context(streams.watching(Caller("10.0.1.1"), "m1", batched=True))  # type: ignore[arg-type]
        stack.enter_context(streams.watching(Caller("10.0.1.2"), "m2", batched=False))  # type: ignore[arg-type]
    assert not streams._open, "every place is given back"


async def read_all(call: Any) -> list[spb.WatchMatchResponse]:
    """Every message until the stream ends."""
    out = []
    while isinstance(message := await call.read(), spb.WatchMatchResponse):
        out.append(message)
    return out


def test_a_batched_spectator_sees_what_an_unbatched_one_sees_in_fewer_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history comes in chunks of up to BATCH_EVENTS; with a frame of 3 s, the live
    events of many quick actions come in a few messages (each frame gathers what came
    meanwhile), where the unbatched spectator gets one message an event."""
    monkeypatch.setattr(streams_module, "SPECTATOR_FRAME", 3.0)

    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(
                api, "hexathlon", 4, options={"rounds": ["clubs", "fan_tan"]}
            )
            hosted = server.arena.matches[table.match_id]
            for _ in range(12):  # a history before the spectators come
                await play_lowest(server, api, table)
            history = hosted.last_seq

            def watch(batched: bool) -> Any:
                request = spb.WatchMatchRequest(match_id=table.match_id, batched=batched)
                return api.WatchMatch(request, timeout=STREAM_TIMEOUT * 2)

            batched_call, plain_call = watch(True), watch(False)
            first = await batched_call.read()
            assert first.HasField("snapshot") and first.snapshot.seq == history
            plain_first = await plain_call.read()
            assert plain_first.HasField("snapshot")
            actions = await play_hosted_to_end(server, api, table)
            batched = [first, *await read_all(batched_call)]
            plain = [plain_first, *await read_all(plain_call)]

            seqs = flattened(batched[1:])
            assert seqs == flattened(plain[1:]) == list(range(1, hosted.last_seq + 1))
            assert unbatched(batched[1:]) == plain[1:], "the same messages, turns and all"
            history_messages = math.ceil(history / BATCH_EVENTS)
            live = [m for m in batched[1 + history_messages :] if m.HasField("event")]
            assert live and live[0].event.seq == history + 1
            # 3 s frames: the actions took far less than that in all but a slow machine.
            assert len(live) <= 4 < actions, (len(live), actions)

    run(scenario(), 120)
