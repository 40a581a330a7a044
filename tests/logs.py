"""The log a server would return for a finished engine match, built the server's way.

Why: the audit, replay and browser tests need real logs (chained hashes, MatchInfo, seed)
without a server; this builds them from the engine and the protocol's own encoding, in the
server's order of entries, so an audit or a replay cannot tell them from a fetched log. Only
tests use it, so it lives here rather than in ``cardarena.clients.logs``.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from cardarena.engine import Match
from cardarena.engine.events import DealerDrawn, Dealt, TrumpDrawn
from cardarena.engine.match import ActionReader
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

CHANCE_EVENTS = (DealerDrawn, TrumpDrawn, Dealt)


def play_with_time_outs(match: Match, rng: random.Random, every: int) -> list[int]:
    """Play ``match`` to its end with ``rng``'s choice of legal actions, except that the seat to
    act times out (its default action is played) whenever the log's length is a multiple of
    ``every``; return the indices in ``match.log`` of those actions, for ``timed_out`` below."""
    timed_out: list[int] = []
    while not match.over:
        seat = match.to_act
        assert seat is not None
        if len(match.log) % every == 0:
            timed_out.append(len(match.log))
            match.apply(seat, match.default_action())
        else:
            match.apply(seat, rng.choice(match.legal_actions()))
    return timed_out


def log_from_engine(
    match: Match,
    seed: bytes,
    match_id: str,
    *,
    names: Sequence[str] | None = None,
    timed_out: Collection[int] = (),
    move_ms: int = 0,
    created_unix_ms: int = 0,
    reserved: Sequence[bool] | None = None,
    contributions: Sequence[bytes] | None = None,
    cancelled: str | None = None,
    seated: Collection[int] | None = None,
) -> spb.GetMatchLogResponse:
    """The log a server would return for the finished engine ``match``, built the server's way.

    The order of entries is the server's: the events of match creation (MatchStarted carrying ``move_ms`` and one
    ``reserved`` flag per seat, default none reserved; ``reserved=()`` writes no flags, as a
    log from before reservations), one ``SeatJoined`` per seat of ``seated`` (default every
    seat; ``names``, default ``seat N``; ``contributions``, default none, one per seat, ``b""``
    for none: the engine ``match`` must have been dealt from their mix), then the first
    deal (only if every seat joined), every later event at ``seq`` from 1 on, a
    ``TimedOut`` before each action whose index in ``match.log`` is in ``timed_out``, then
    ``MatchCancelled`` if ``cancelled`` gives its reason (the match need not be over then),
    and ``SeedRevealed`` last.
    """
    if cancelled is None and not match.over:
        raise ValueError("the match has not ended: its log and seed are not public yet")
    if cancelled is not None and match.over:
        raise ValueError("the match has ended: it cannot be cancelled")
    seat_names = list(names) if names is not None else [f"seat {s}" for s in range(match.players)]
    if len(seat_names) != match.players:
        raise ValueError(f"{len(seat_names)} names for {match.players} seats")
    flags = [False] * match.players if reserved is None else list(reserved)
    if flags and len(flags) != match.players:
        raise ValueError(f"{len(flags)} reserved flags for {match.players} seats")
    joined = sorted(set(range(match.players) if seated is None else seated))
    given = list(contributions) if contributions is not None else None
    if given is not None and len(given) != match.players:
        raise ValueError(f"{len(given)} contributions for {match.players} seats")
    reader = ActionReader()
    recorded_at = [reader(e) for e in match.log]
    actions = [i for i, recorded in enumerate(recorded_at) if recorded is not None]
    if actions and len(joined) < match.players:
        raise ValueError("play cannot start before every seat has joined")
    # Seats join before the first deal or draw (which waits for the last of them): a match
    # whose seats did not all join was never dealt, so its log stops before the deal.
    chance = [i for i, e in enumerate(match.log) if isinstance(e, CHANCE_EVENTS)]
    joins_at = chance[0] if chance else len(match.log)
    opening = match.log if len(joined) == match.players else match.log[:joins_at]
    events: list[pb.Event] = []
    for index, event in enumerate([*opening, None]):
        if index == joins_at:
            events += [
                pb.Event(
                    seat_joined=pb.SeatJoined(
                        seat=s, name=seat_names[s], contribution=given[s] if given else b""
                    )
                )
                for s in joined
            ]
        if event is None:
            break
        if index in timed_out:
            recorded = recorded_at[index]
            if recorded is None:
                raise ValueError(f"event {index} is not an action: it cannot follow a time-out")
            events.append(pb.Event(timed_out=pb.TimedOut(seat=recorded[0])))
        events.append(codec.event_to_pb(event, 0, match_id, move_ms=move_ms, reserved_seats=flags))
    if cancelled is not None:
        totals = [codec.score_to_pb(t) for t in match.totals]
        events.append(pb.Event(match_cancelled=pb.MatchCancelled(reason=cancelled, totals=totals)))
    events.append(pb.Event(seed_revealed=pb.SeedRevealed(seed=seed)))
    entries: list[spb.LogEntry] = []
    prev = genesis_hash(match_id)
    for seq, message in enumerate(events, start=1):
        message.seq = seq
        payload = message.SerializeToString()
        prev = chain_hash(prev, payload)
        entries.append(spb.LogEntry(seq=seq, event=payload, hash=prev))
    started = events[0].match_started
    faults = [0] * match.players  # every time-out is a fault, counted as the server does
    for index in timed_out:
        recorded = recorded_at[index]
        assert recorded is not None  # checked above
        faults[recorded[0]] += 1
    seats = [
        spb.SeatInfo(
            seat=s,
            taken=s in joined,
            name=seat_names[s] if s in joined else "",
            reserved=bool(flags) and flags[s],
            faults=faults[s],
        )
        for s in range(match.players)
    ]
    info = spb.MatchInfo(
        match_id=match_id,
        created_unix_ms=created_unix_ms,
        time_control=spb.TimeControl(move_ms=move_ms),
        game=started.game,
        players=started.players,
        options=started.options,
        seed_commitment=started.seed_commitment,
        last_seq=len(entries),
        last_hash=entries[-1].hash,
        status=spb.MATCH_STATUS_ENDED,
        seats=seats,
        totals=[codec.score_to_pb(t) for t in match.totals],
        winners=list(match.winners),
        cancelled=cancelled is not None,
        seed=seed,
    )
    return spb.GetMatchLogResponse(match=info, entries=entries, seed=seed)
