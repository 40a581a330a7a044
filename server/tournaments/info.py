"""TournamentInfo: what anyone may know about a tournament, its standings included.

The standings, the crosstable and the stop rule's state are the pure functions of
``cardarena.competition`` over the matches played so far, in plan order (so they do not
depend on which match happened to end first); they are computed again only when a match has
ended since the last time anyone asked, and while the tournament runs at most once a second.

Why only the duplicate groups that have ended count while it runs: a match's totals are made
from its hands, and every rotation of a group is dealt the same hands, so the totals of one
rotation (or the standings that moved by them) say something of the cards of the rotations
still to be played (docs/rules.md §4.10). A match of a group still being played is listed
with its status, seats and faults, without its totals, winners or hash (the operator sees
them whole); its results count once the group's last match has ended.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cardarena.competition import Pairing, Standing, crosstable, standings
from cardarena.engine import commitment
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.designs import pairings_of

from .groups import shown_groups

REFRESH_SECONDS = 1.0
"""How stale the standings of a running tournament may be (counts are always current)."""

if TYPE_CHECKING:
    from ..hosting.signing import Signer
    from .director import Director


@dataclass(frozen=True)
class Scores:
    version: int
    at: float
    """When they were computed (monotonic seconds)."""
    standings: list[Standing]
    crosstable: list[Pairing]
    sprt: tpb.SprtState | None


def scores(director: Director) -> Scores:
    """The standings as of now, computed again at most every :data:`REFRESH_SECONDS` while
    the tournament runs: ratings are replayed over every match in plan order, so computing
    them at every match's end would cost a long tournament time quadratic in its length."""
    cached = director.scores
    if cached is not None and cached.version == director.version:
        return cached
    now = time.monotonic()
    if cached is not None and not director.ended and now - cached.at < REFRESH_SECONDS:
        return cached
    shown = shown_groups(director)
    played = [
        director.played[i]
        for i in sorted(director.played)
        if shown is None or director.played[i].group in shown
    ]
    lowest = director.spec.lowest_wins
    entrants = director.spec.entrants
    sprt_state = None
    decision = director.stop_rule.state(director.played, director.complete_groups())
    if decision is not None:
        sprt_state = tpb.SprtState(
            rule=sprt_rule(director),
            llr=decision.llr,
            lower=decision.lower,
            upper=decision.upper,
            samples=decision.samples,
            verdict=decision.verdict or "",
        )
    director.scores = Scores(
        director.version,
        now,
        standings(played, entrants, lowest_wins=lowest),
        crosstable(played, entrants, lowest_wins=lowest),
        sprt_state,
    )
    return director.scores


def sprt_rule(director: Director) -> tpb.SprtRule | None:
    rule = director.spec.sprt
    if rule is None:
        return None
    return tpb.SprtRule(
        a=rule.a, b=rule.b, alpha=rule.alpha, beta=rule.beta, d0=rule.d0, d1=rule.d1
    )


def fault_policy(forfeit_after: int) -> tpb.FaultPolicy:
    if forfeit_after == 0:
        return tpb.FaultPolicy(fallback=True)
    return tpb.FaultPolicy(forfeit_after=forfeit_after)


def tournament_info(
    director: Director, *, matches: range | None = None, operator: bool = False
) -> tpb.TournamentInfo:
    """What anyone may know about the tournament now, with the lines of the plan indices
    ``matches`` (``operator``: those lines whole, of groups still being played too)."""
    spec, record = director.spec, director.record
    now = scores(director)
    info = tpb.TournamentInfo(
        tournament_id=director.tournament_id,
        name=spec.name,
        game=spec.game,
        players=spec.players,
        options=codec.struct_of(spec.options),
        time_control=spb.TimeControl(**spec.control.settings()),
        entrants=list(spec.entrants),
        deals=spec.deals,
        concurrency=spec.concurrency,
        fault_policy=fault_policy(spec.forfeit_after),
        status=tpb.TOURNAMENT_STATUS_ENDED if director.ended else tpb.TOURNAMENT_STATUS_RUNNING,
        end_reason=director.end_reason,
        cancelled=director.cancelled,
        created_unix_ms=_unix_ms(record.created_at),
        seed_commitment=commitment(record.seed),
        lowest_wins=spec.lowest_wins,
        planned=len(director.plans),
        started=len(director.match_ids),
        finished=len(director.played),
        failed=len(director.failed),
        void_matches=director.void_matches,
        forfeits=director.forfeits,
        pairings=pairings_of(spec.design),
        standings=[_standing(s) for s in now.standings],
        crosstable=[_pairing(p) for p in now.crosstable],
    )
    rule = sprt_rule(director)
    if rule is not None:
        info.stop.CopyFrom(rule)
    if now.sprt is not None:
        info.sprt.CopyFrom(now.sprt)
    if director.ended:
        info.seed = record.seed
    info.entry_ms = spec.entry_ms
    sealed = director.entry.sealed
    if sealed is not None:
        info.entry_closed = True
        info.contributions.extend(c or b"" for c in sealed)
    if matches is not None:
        info.matches.extend(match_lines(director, matches, operator=operator))
    return info


def match_lines(
    director: Director, indices: range, *, operator: bool = False
) -> list[tpb.TournamentMatch]:
    """The planned matches ``indices``; one of a group still being played without what its
    hands made (totals, winners, the hash that pins its log), unless for the ``operator``."""
    shown = None if operator else shown_groups(director)
    lines = []
    for index in indices:
        plan = director.plans[index]
        whole = shown is None or plan.group in shown
        line = tpb.TournamentMatch(
            index=plan.index,
            group=plan.group,
            deal=plan.deal,
            rotation=plan.rotation,
            entrants=[director.spec.entrants[e] for e in plan.seats],
            match_id=director.match_ids.get(plan.index, ""),
        )
        ended = director.ended_matches.get(plan.index)
        if plan.index in director.running:
            line.status = spb.MATCH_STATUS_RUNNING
        elif ended is not None:
            line.status = spb.MATCH_STATUS_ENDED
            line.cancelled = plan.index in director.failed
            if whole:
                line.last_hash = ended
        played = director.played.get(plan.index)
        if played is not None:
            if whole:
                line.totals.extend(codec.score_to_pb(t) for t in played.totals)
                line.winners.extend(played.winners)
            line.faults.extend(played.faults)
            line.forfeited.extend(played.forfeited)
        lines.append(line)
    return lines


def _standing(row: Standing) -> tpb.Standing:
    out = tpb.Standing(
        entrant=row.entrant,
        matches=row.matches,
        groups=row.groups,
        wins=row.wins,
        win_rate=row.win_rate or 0.0,
        faults=row.faults,
        forfeits=row.forfeits,
        timeouts=row.kinds.timeouts,
        refused_actions=row.kinds.refused,
        disconnects=row.kinds.disconnects,
    )
    if row.mean is not None:
        out.mean, out.has_mean = row.mean, True
    if row.ci_low is not None and row.ci_high is not None:
        out.ci_low, out.ci_high, out.has_interval = row.ci_low, row.ci_high, True
    if row.rating is not None:
        out.mu, out.sigma, out.ordinal = row.rating.mu, row.rating.sigma, row.rating.ordinal
    return out


def _pairing(pair: Pairing) -> tpb.Pairing:
    out = tpb.Pairing(a=pair.a, b=pair.b, groups=pair.groups)
    if pair.mean is not None:
        out.mean, out.has_mean = pair.mean, True
    if pair.ci_low is not None and pair.ci_high is not None:
        out.ci_low, out.ci_high, out.has_interval = pair.ci_low, pair.ci_high, True
    return out


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def signed_brief(director: Director, signer: Signer | None) -> tpb.TournamentInfo:
    """A final tournament's info without lines, with the signature over every line (none
    without a ``signer``). That is 1.7 s of Python for 100,000 matches: the registry builds it
    once per tournament, in a worker thread, and keeps it (:mod:`.finals`)."""
    if signer is None:
        return tournament_info(director)
    info = tournament_info(director, matches=range(len(director.plans)))
    signature = signer.sign_results(info)
    del info.matches[:]
    info.results_signature.CopyFrom(signature)
    return info
