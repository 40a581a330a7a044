"""MatchInfo: what anyone may know about a match, from memory or from its stored record."""

from __future__ import annotations

import datetime
import json

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..hosting import Arena, HostedMatch
from ..store import (
    MatchRecord,
)

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
    config = json.loads(hosted.record.config)
    info = spb.MatchInfo(
        match_id=hosted.match_id,
        game=hosted.record.game,
        players=hosted.record.players,
        options=codec.struct_of(config["options"]),
        status=STATUS_OF[hosted.status],
        seats=[
            spb.SeatInfo(
                seat=i,
                taken=s.token_hash is not None,
                name=s.name,
                reserved=s.reserved is not None,
                faults=hosted.faults.counts[i],
                forfeited=hosted.faults.forfeited[i],
            )
            for i, s in enumerate(hosted.seats)
        ],
        created_unix_ms=_unix_ms(hosted.record.created_at),
        seed_commitment=hosted.record.commitment,
        last_seq=hosted.last_seq,
        last_hash=hosted.last_hash,
        time_control=spb.TimeControl(move_ms=hosted.move_ms),
        totals=[codec.score_to_pb(t) for t in hosted.engine.totals],
        winners=list(hosted.engine.winners),
        cancelled=hosted.cancelled,
        tournament_id=hosted.tournament_id,
    )
    if hosted.revealed:
        info.seed = hosted.record.seed
    return info


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


async def listed_info(arena: Arena, record: MatchRecord) -> spb.MatchInfo:
    """A listed match: from memory if hosted here, an ended one from its stored record,
    seats and the last entries of its log (no replay), anything else loaded."""
    hosted = arena.matches.get(record.match_id)
    config = json.loads(record.config)
    # A match under a fault policy has its faults all through its log: it is loaded.
    if hosted is not None or record.status != "ended" or "tournament" in config:
        return await settled_info(hosted or await arena.get(record.match_id))
    tail = await arena.store.read_tail(record.match_id, 3)
    kinds = {e.WhichOneof("kind"): e for e in map(pb.Event.FromString, (s.payload for s in tail))}
    if "match_ended" in kinds:
        ended = kinds["match_ended"].match_ended
        totals, winners, cancelled = list(ended.totals), list(ended.winners), False
    elif "match_cancelled" in kinds:
        totals, winners = list(kinds["match_cancelled"].match_cancelled.totals), []
        cancelled = True
    else:  # a log that predates totals in MatchCancelled
        return await settled_info(await arena.get(record.match_id))
    seats = {s.seat: s for s in await arena.store.get_seats(record.match_id)}
    reserved = config.get("reserved", {})
    return spb.MatchInfo(
        match_id=record.match_id,
        game=record.game,
        players=record.players,
        options=codec.struct_of(config["options"]),
        status=spb.MATCH_STATUS_ENDED,
        seats=[
            spb.SeatInfo(
                seat=i,
                taken=i in seats,
                name=seats[i].name if i in seats else "",
                reserved=str(i) in reserved,
            )
            for i in range(record.players)
        ],
        created_unix_ms=_unix_ms(record.created_at),
        seed_commitment=record.commitment,
        last_seq=tail[-1].seq,
        last_hash=tail[-1].hash,
        time_control=spb.TimeControl(move_ms=int(config.get("move_ms", 0))),
        totals=totals,
        winners=winners,
        seed=record.seed,
        cancelled=cancelled,
    )
