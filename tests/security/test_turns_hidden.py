"""The public ``Turn`` (whose turn it is, and the move deadline) tells no reader anything hidden.

It says what a spectator's snapshot says (``to_act``, ``deadline_unix_ms``), to everyone
alike. Where that could give a card or a reason away it must not:

* in a Fan Tan round with voluntary passes a forced pass is hidden (issue 10, defect 7): a
  seat that cannot play is asked like any other, so its turn is told before its pass exactly
  as before a chosen one, and nothing marks the difference;
* in Triathlon the seats that name the excluded suits and the dealer who chooses trump are
  told in turn, which the rules fix and the events show;
* the Turn names only the seat whose move comes next in the reader's own stream (or nobody at
  the end): it never says more than the next public event, and is the same bytes for the
  spectator and for every seat.

The log is not touched: the match audits clean and has no entry the Turns added.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from tests.helpers import unpacked

from ..calls import (
    RPC_TIMEOUT,
    STREAM_TIMEOUT,
    audit,
    auth,
    create,
    join_all,
    read_to_end,
    run,
    stub,
)
from ..serverproc import ServerProcess
from .test_forced_passes import play

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration

SEED = bytes(range(32))
MOVE_MS = 600_000
TURN_FIELDS = {"seq", "seat", "deadline_unix_ms"}

MATCHES: dict[str, tuple[str, int, dict[str, Any]]] = {
    "fan_tan_voluntary": (
        "pentathlon",
        4,
        {"rounds": ["fan_tan"], "fan_tan": {"voluntary_pass": True}},
    ),
    "triathlon": ("triathlon", 3, {"max_deals": 2}),
}


def mover(event: pb.Event) -> int | None:
    """The seat whose move a projected event shows: every Passed a reader sees in these
    matches is a move (a voluntary-pass round asks for every pass; Triathlon has none)."""
    kind = event.WhichOneof("kind")
    if kind in ("card_played", "passed", "suit_excluded", "trump_chosen"):
        return int(getattr(event, kind).seat)
    return None


async def read_all(call: Any) -> list[Any]:
    """Every part of every message of a stream until it ends."""
    return [part for message in await read_to_end(call) for part in unpacked(message)]


async def scenario(
    api: MatchServiceAsyncStub, name: str
) -> tuple[spb.GetMatchLogResponse, list[list[Any]]]:
    """Play the match with random moves (passing by choice now and then) while a spectator and
    every seat read it; its full log, and what each reader read (the spectator's first)."""
    game, players, options = MATCHES[name]
    info = await create(api, game, players, seed=SEED, move_ms=MOVE_MS, **options)
    tokens = await join_all(api, info.match_id, players)
    calls = [
        api.WatchMatch(spb.WatchMatchRequest(match_id=info.match_id), timeout=STREAM_TIMEOUT)
    ] + [
        api.StreamEvents(
            spb.StreamEventsRequest(match_id=info.match_id, seat=seat),
            metadata=auth(token),
            timeout=STREAM_TIMEOUT,
        )
        for seat, token in enumerate(tokens)
    ]
    first: list[Any] = [await asyncio.wait_for(call.read(), RPC_TIMEOUT) for call in calls]
    assert all(m.HasField("snapshot") for m in first), "every reader opened before any move"
    reading = asyncio.gather(*(read_all(call) for call in calls))
    await play(api, info.match_id, tokens, random.Random(11))
    streams = await reading
    log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=info.match_id), timeout=10)
    return log, [[m.snapshot, *stream] for m, stream in zip(first, streams, strict=True)]


@pytest.mark.parametrize("name", list(MATCHES))
def test_a_turn_tells_nothing_hidden(server_process: ServerProcess, name: str) -> None:
    async def main() -> tuple[spb.GetMatchLogResponse, list[list[Any]]]:
        async with grpc.aio.insecure_channel(server_process.address) as channel:
            return await scenario(stub(channel), name)

    log, streams = run(main(), seconds=120)
    turns = [[m for m in stream if isinstance(m, pb.Turn)] for stream in streams]
    assert turns[0], "the spectator is told whose turn it is"
    spectator = [t.SerializeToString() for t in turns[0]]
    for seat, mine in enumerate(turns[1:]):
        assert [t.SerializeToString() for t in mine] == spectator, f"seat {seat} told otherwise"
    for turn in turns[0]:  # the three fields and no byte more
        assert {f.name for f, _ in turn.ListFields()} <= TURN_FIELDS
        bare = pb.Turn(seq=turn.seq, deadline_unix_ms=turn.deadline_unix_ms)
        if turn.HasField("seat"):
            bare.seat = turn.seat
        assert bare.SerializeToString() == turn.SerializeToString()
    # Each Turn names the seat of the next move in the reader's own stream, nothing else.
    for stream in streams:
        for at, item in enumerate(stream):
            if isinstance(item, pb.Turn):
                moves = (mover(m) for m in stream[at + 1 :] if isinstance(m, pb.Event))
                nxt = next((seat for seat in moves if seat is not None), None)
                assert (item.seat if item.HasField("seat") else None) == nxt, (at, item)
    # Every pass, forced or chosen, is told alike: its seat's Turn right before it.
    full = {e.seq: pb.Event.FromString(e.event) for e in log.entries}
    reasons = {e.passed.reason for e in full.values() if e.WhichOneof("kind") == "passed"}
    if name == "fan_tan_voluntary":
        assert reasons == {pb.PASS_REASON_FORCED, pb.PASS_REASON_CHOSEN}, "both kinds of pass"
    for stream in streams:
        for at, item in enumerate(stream):
            if isinstance(item, pb.Event) and item.WhichOneof("kind") == "passed":
                assert item.passed.reason == pb.PASS_REASON_HIDDEN
                told = [m for m in stream[:at] if not isinstance(m, pb.Event)]
                turn = next(m for m in reversed(told) if isinstance(m, pb.Turn))
                assert (turn.seat, turn.seq) == (item.passed.seat, item.seq - 1)
    # Not in the log: its entries are the events only, and it audits clean.
    assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
    assert all(full[s].WhichOneof("kind") for s in full)
    audit(log)
