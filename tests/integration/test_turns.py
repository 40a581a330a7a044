"""Whose turn it is, on every kind of stream of a real server (``Turn``): a spectator's
(WatchMatch), a seat's (StreamEvents) and a bot's (Play) streams all say, after every write
that starts a move, which seat is to act and its move deadline, the same message for each;
at a Fan Tan round's start and at each new Crazy Sixes hand too, where no event names the seat
to act (issue 13)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from tests.helpers import unpacked

from ..calls import RPC_TIMEOUT, STREAM_TIMEOUT, auth, create, read_to_end, run, seat_player, stub
from ..serverproc import ServerProcess

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration

MOVE_MS = 600_000
"""Long enough never to run out: every move is a seat's own."""
SEED = bytes(range(32))

CONFIGS: dict[str, tuple[str, int, dict[str, Any]]] = {
    "crazy_sixes": ("crazy_sixes", 3, {}),
    "fan_tan_second": ("pentathlon", 4, {"rounds": ["clubs", "fan_tan"]}),
    "triathlon": ("triathlon", 3, {"max_deals": 2}),
}


def actor(event: pb.Event, voluntary: bool) -> int | None:
    """The seat whose own move an entry of the full log records (a forced pass is the
    server's, except in a round with voluntary passes, where every seat is asked)."""
    kind = event.WhichOneof("kind")
    if kind == "card_played":
        return event.card_played.seat
    if kind == "passed" and (voluntary or event.passed.reason != pb.PASS_REASON_FORCED):
        return event.passed.seat
    if kind in ("suit_excluded", "trump_chosen", "timed_out"):
        return int(getattr(event, kind).seat)
    return None


def movers(log: list[pb.Event]) -> list[tuple[int, int]]:
    """``(seq, seat)`` of each move in the log, in order."""
    out = []
    voluntary = False
    for event in log:
        if event.WhichOneof("kind") == "round_started":
            voluntary = event.round_started.voluntary_pass
        seat = actor(event, voluntary)
        if seat is not None:
            out.append((event.seq, seat))
    return out


def next_mover(moves: list[tuple[int, int]], seq: int) -> int | None:
    return next((seat for at, seat in moves if at > seq), None)


def inner(messages: list[Any]) -> list[Any]:
    """The parts of each stream message, in the order a client reads them."""
    return [part for m in messages for part in unpacked(m)]


async def full_log(api: MatchServiceAsyncStub, match_id: str) -> list[pb.Event]:
    log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=RPC_TIMEOUT)
    return [pb.Event.FromString(e.event) for e in log.entries]


async def watched_match(
    api: MatchServiceAsyncStub, game: str, players: int, options: dict[str, Any]
) -> tuple[list[pb.Event], list[list[Any]]]:
    """Play a match on a clock with the lowest legal moves while a spectator, seat 0's
    StreamEvents and seat 1's Play read it from before the first deal; its full log and what
    each of the three read (the oneof members, in order)."""
    info = await create(api, game, players, seed=SEED, move_ms=MOVE_MS, **options)
    match_id = info.match_id
    spectator = api.WatchMatch(spb.WatchMatchRequest(match_id=match_id), timeout=STREAM_TIMEOUT)
    # Each stream's snapshot is read before the next join: only then is its reader surely
    # subscribed (a call merely started may reach the server after the deal, and its
    # snapshot then stands where the first Turn would have been).
    firsts = [await spectator.read()]
    tokens = []
    for seat in range(players):
        joined = await api.JoinMatch(
            spb.JoinMatchRequest(match_id=match_id, seat=seat, name=f"p{seat}"),
            timeout=RPC_TIMEOUT,
        )
        tokens.append(joined.token)
        if seat == 0:  # open before the last join deals
            seat0 = api.StreamEvents(
                spb.StreamEventsRequest(match_id=match_id, seat=0),
                metadata=auth(tokens[0]),
                timeout=STREAM_TIMEOUT,
            )
            firsts.append(await seat0.read())
        if seat == 1:
            bot = api.Play(metadata=auth(tokens[1]), timeout=STREAM_TIMEOUT)
            await bot.write(spb.PlayRequest(open=spb.PlayOpen(match_id=match_id, seat=1)))
            firsts.append(await bot.read())
    readers = asyncio.gather(read_to_end(spectator), read_to_end(seat0), read_to_end(bot))
    await asyncio.gather(
        *(seat_player(api, match_id, seat, tokens[seat]) for seat in range(players))
    )
    streams = await readers
    whole = [[first, *rest] for first, rest in zip(firsts, streams, strict=True)]
    return await full_log(api, match_id), [inner(s) for s in whole]


@pytest.mark.parametrize("config", list(CONFIGS), ids=list(CONFIGS))
def test_every_stream_names_the_seat_to_act_after_every_move(
    server: ServerProcess, config: str
) -> None:
    game, players, options = CONFIGS[config]

    async def scenario() -> tuple[list[pb.Event], list[list[Any]]]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            return await watched_match(stub(channel), game, players, options)

    log, streams = run(scenario(), seconds=120)
    moves = movers(log)
    turns = [[m for m in stream if isinstance(m, pb.Turn)] for stream in streams]
    assert turns[0] == turns[1] == turns[2], "every reader is told the same turns"
    # One after the first deal and one after every move; the last says nobody is to act.
    assert len(turns[0]) == len(moves) + 1
    last = turns[0][-1]
    assert (last.HasField("seat"), last.deadline_unix_ms, last.seq) == (False, 0, log[-1].seq)
    for turn in turns[0][:-1]:
        assert turn.HasField("seat") and turn.seat == next_mover(moves, turn.seq), turn
        assert turn.deadline_unix_ms > 0
    deadlines = [t.deadline_unix_ms for t in turns[0][:-1]]
    assert deadlines == sorted(deadlines)
    for stream in streams:  # each after the events up to its seq, never ahead of them
        last_seq = 0
        for item in stream:
            if isinstance(item, pb.Event):
                last_seq = item.seq
            elif isinstance(item, pb.Turn):
                assert item.seq == last_seq
    # Each round's first mover is named before it moves, right after the round's deal: the
    # spectator could not tell who holds 7H, nor who opens a new hand.
    spectator = streams[0]
    rounds = [e.seq for e in log if e.WhichOneof("kind") == "dealt"]
    assert len(rounds) >= 2
    for dealt in rounds:
        at = next(i for i, m in enumerate(spectator) if isinstance(m, pb.Event) and m.seq == dealt)
        following = next(m for m in spectator[at + 1 :] if not isinstance(m, pb.Event))
        assert isinstance(following, pb.Turn) and following.seat == next_mover(moves, dealt)
    if config == "fan_tan_second":
        fan_tan = log[rounds[1] - 1]  # its Dealt
        holder = next(
            s for s, h in enumerate(fan_tan.dealt.hands) if any(c.code == "7H" for c in h.cards)
        )
        assert next_mover(moves, fan_tan.seq) == holder
    # The seat's own prompt comes after the Turn, and says the same deadline.
    for stream, seat in ((streams[1], 0), (streams[2], 1)):
        for at, item in enumerate(stream):
            if isinstance(item, pb.YourTurn):
                told = stream[at - 1]
                assert isinstance(told, pb.Turn) and told.seat == seat
                assert (told.seq, told.deadline_unix_ms) == (item.seq, item.deadline_unix_ms)
