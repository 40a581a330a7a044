"""MatchInfo: what anyone may know about a match, from memory or from its stored record."""

from __future__ import annotations

import datetime
import json

from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb

from ..hosting import Arena, HostedMatch
from ..hosting.outcome import Outcome
from ..store import ENDED, MatchRecord

STATUS_OF = {
    "waiting": spb.MATCH_STATUS_WAITING,
    "running": spb.MATCH_STATUS_RUNNING,
    "ended": spb.MATCH_STATUS_ENDED,
}


async def settled_info(hosted: HostedMatch) -> spb.MatchInfo:
    """``match_info`` between writes: under the match's lock, so that a reader never sees the
    engine's state of an action whose write is still in flight (status ENDED with the seq and
    hash of the entry before the end)."""
    async with hosted.lock:
        return match_info(hosted)


def match_info(hosted: HostedMatch) -> spb.MatchInfo:
    seats = [
        spb.SeatInfo(seat=i, taken=s.token_hash is not None, name=s.name)
        for i, s in enumerate(hosted.seats)
    ]
    return _info(hosted.record, hosted.status, seats, hosted.outcome())


async def listed_info(arena: Arena, record: MatchRecord) -> spb.MatchInfo:
    """A listed match: from memory if hosted here, an ended one from its stored record, its
    seats and one read of its log (no replay, nothing hosted), anything else loaded."""
    hosted = arena.matches.get(record.match_id)
    if hosted is not None or record.status != ENDED:
        return await settled_info(hosted or await arena.get(record.match_id))
    taken = await arena.seat_names(record.match_id)
    seats = [
        spb.SeatInfo(seat=i, taken=i in taken, name=taken.get(i, "")) for i in range(record.players)
    ]
    return _info(record, "ended", seats, await arena.stored_outcome(record))


def _info(
    record: MatchRecord, status: str, seats: list[spb.SeatInfo], outcome: Outcome
) -> spb.MatchInfo:
    """MatchInfo from the match's settings, its seats and what its log says so far."""
    config = json.loads(record.config)
    reserved = config.get("reserved", {})
    for seat in seats:
        seat.reserved = str(seat.seat) in reserved
        seat.faults = outcome.faults[seat.seat]
        seat.forfeited = outcome.forfeited[seat.seat]
    info = spb.MatchInfo(
        match_id=record.match_id,
        game=record.game,
        players=record.players,
        options=codec.struct_of(config["options"]),
        status=STATUS_OF[status],
        seats=seats,
        created_unix_ms=_unix_ms(record.created_at),
        seed_commitment=record.commitment,
        last_seq=outcome.last_seq,
        last_hash=outcome.last_hash,
        time_control=spb.TimeControl(move_ms=int(config.get("move_ms", 0))),
        totals=[codec.score_to_pb(t) for t in outcome.totals],
        winners=list(outcome.winners),
        cancelled=outcome.cancelled,
        tournament_id=str(config.get("tournament", "")),
    )
    if outcome.revealed:
        info.seed = record.seed
    return info


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
