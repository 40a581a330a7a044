"""What a ladder shows: its settings and board (``LadderInfo``), and its signed snapshots."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from cardarena.competition.ladder import Row, split_player
from cardarena.v1 import codec
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb

from ..tournaments.info import fault_policy

if TYPE_CHECKING:
    from .director import LadderDirector


def ladder_info(director: LadderDirector, *, live: bool = True) -> lpb.LadderInfo:
    """The ladder now, its board best first (``live``: with who is connected and when each
    was last seen, which a signed snapshot leaves out)."""
    spec, record = director.spec, director.record
    info = lpb.LadderInfo(
        ladder_id=director.ladder_id,
        name=spec.name,
        game=spec.game,
        players=spec.players,
        options=codec.struct_of(spec.options),
        time_control=spb.TimeControl(**spec.control.settings()),
        entrants=list(spec.entrants),
        concurrency=spec.concurrency,
        fault_policy=fault_policy(spec.forfeit_after),
        status=lpb.LADDER_STATUS_CLOSED if director.closed else lpb.LADDER_STATUS_RUNNING,
        created_unix_ms=_unix_ms(record.created_at),
        lowest_wins=spec.lowest_wins,
        scheduled=director.next_group * director.size,
        counted=director.board.counted,
        running=len(director.match_ids),
        voided=director.board.voided,
    )
    for row in director.board.ranked():
        info.board.append(_row(director, row, live=live))
    return info


def _row(director: LadderDirector, row: Row, *, live: bool) -> lpb.LadderRow:
    entrant, version = split_player(row.player, director.spec.entrants)
    out = lpb.LadderRow(
        player=row.player,
        entrant=entrant,
        version=version,
        retired=director.retired(row.player),
        matches=row.matches,
        groups=row.groups,
        wins=row.wins,
        faults=row.faults,
        forfeits=row.forfeits,
        last_match=max(row.last_index, 0),
    )
    rating = director.board.rating(row.player)
    if rating is not None:
        out.mu, out.sigma, out.ordinal = rating.mu, rating.sigma, rating.ordinal
    if row.mean is not None:
        out.mean, out.has_mean = row.mean, True
    interval = row.interval
    if interval is not None:
        out.ci_low, out.ci_high, out.has_interval = interval[0], interval[1], True
    index = director.players.get(row.player)
    if live and index is not None:
        out.last_seen_unix_ms = int(director.last_seen[index] * 1000)
        out.connected = director.links.connected(index) and not out.retired
    return out


def snapshot(director: LadderDirector) -> lpb.LadderSnapshot:
    """The board as of its settled prefix, and the digest of the matches it counts."""
    return lpb.LadderSnapshot(
        ladder=ladder_info(director, live=False), matches_digest=director.digest
    )


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
