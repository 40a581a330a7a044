"""Auditing a whole hosted tournament: every match log, the schedule, and the standings.

What a skeptic of a tournament needs, with no trust in its server: that each match's log is
sound and is the one the tournament recorded (pinned to the last hash it published), that
the matches are the ones the revealed tournament seed plans (every duplicate group dealt from
its group seed, every seat held by the entrant the schedule puts there), and that the
standings the server published are what the logs give when recomputed here with the same
pure rules (``cardarena.competition``). Any difference is a finding; the first ones are
reported, all are counted.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import json_format

from cardarena.competition import Played, group_seed, schedule, standings
from cardarena.engine import commitment
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient
from ..logs import save_log
from .auditor import audit_log

PARALLEL = 8
"""Logs fetched and audited at once."""
TOLERANCE = 1e-9
"""How far a recomputed mean, interval or win share may differ (float sums in another order)."""
NOTES_KEPT = 20


@dataclass
class TournamentAudit:
    tournament_id: str
    matches: int = 0
    audited: int = 0
    findings: list[str] = field(default_factory=list)
    count: int = 0

    @property
    def ok(self) -> bool:
        return self.count == 0

    def find(self, text: str) -> None:
        self.count += 1
        if len(self.findings) < NOTES_KEPT:
            self.findings.append(text)


async def audit_tournament(
    client: ArenaClient, tournament_id: str, *, save_dir: Path | None = None
) -> TournamentAudit:
    """Fetch the tournament and every log of it, and check all of it (see the module);
    with ``save_dir``, keep every log there as ``MATCH_ID.pb`` (and the tournament as
    ``tournament.json``), to audit or replay again without the server."""
    info = await client.tournaments.get(tournament_id, matches=True)
    report = TournamentAudit(tournament_id, matches=len(info.matches))
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        (save_dir / "tournament.json").write_text(
            json_format.MessageToJson(info, preserving_proto_field_name=True) + "\n"
        )
    if info.status != tpb.TOURNAMENT_STATUS_ENDED:
        report.find("the tournament has not ended: its seeds and logs are not all public yet")
        return report
    _check_schedule(info, report)
    started = [m for m in info.matches if m.match_id]
    gate = asyncio.Semaphore(PARALLEL)

    async def one(line: tpb.TournamentMatch) -> Played | None:
        async with gate:
            log = await client.match_log(line.match_id)
        if save_dir is not None:
            save_log(log, save_dir / f"{line.match_id}.pb")
        return _check_match(info, line, log, report)

    outcomes = await asyncio.gather(*(one(line) for line in started))
    played = [p for p in outcomes if p is not None]
    report.audited = len(started)
    _check_standings(info, played, report)
    return report


def _check_schedule(info: tpb.TournamentInfo, report: TournamentAudit) -> None:
    """The revealed seed plans exactly the matches listed, in order, with their entrants."""
    if commitment(info.seed) != info.seed_commitment:
        report.find("the revealed tournament seed does not match its commitment")
        return
    plans = schedule(info.seed, deals=info.deals, entrants=len(info.entrants), players=info.players)
    if len(plans) != info.planned or len(info.matches) != info.planned:
        report.find(f"{info.planned} matches planned, the seed plans {len(plans)}")
        return
    for plan, line in zip(plans, info.matches, strict=True):
        names = [info.entrants[e] for e in plan.seats]
        if (line.index, line.group, line.deal, line.rotation) != (
            plan.index,
            plan.group,
            plan.deal,
            plan.rotation,
        ) or list(line.entrants) != names:
            report.find(f"match {line.index}: not the match the schedule plans there")


def _check_match(
    info: tpb.TournamentInfo,
    line: tpb.TournamentMatch,
    log: spb.GetMatchLogResponse,
    report: TournamentAudit,
) -> Played | None:
    where = f"match {line.index} ({line.match_id})"
    audit = audit_log(log, match_id=line.match_id, head=line.last_hash)
    if not audit.ok:
        assert audit.failure is not None
        failure = audit.failure
        report.find(f"{where}: {failure.check} check failed at seq {failure.seq}: {failure.reason}")
        return None
    started = pb.Event.FromString(log.entries[0].event).match_started
    if started.tournament_id != info.tournament_id:
        report.find(f"{where}: its log names tournament {started.tournament_id!r}")
    if log.seed != group_seed(info.seed, line.group):
        report.find(f"{where}: not dealt from its duplicate group's seed")
    names = [s.name for s in sorted(log.match.seats, key=lambda s: s.seat)]
    if names != list(line.entrants):
        report.find(
            f"{where}: its seats are held by {names}, the schedule says {list(line.entrants)}"
        )
    if log.match.cancelled:
        return None
    seats = sorted(log.match.seats, key=lambda s: s.seat)
    played = Played(
        index=line.index,
        group=line.group,
        entrants=tuple(line.entrants),
        totals=tuple(codec.score_from_pb(t) for t in log.match.totals),
        winners=tuple(log.match.winners),
        faults=tuple(s.faults for s in seats),
        forfeited=tuple(s.forfeited for s in seats),
    )
    if list(played.faults) != list(line.faults) or list(played.forfeited) != list(line.forfeited):
        report.find(f"{where}: the tournament lists other faults or forfeits than its log")
    return played


def _check_standings(
    info: tpb.TournamentInfo, played: Sequence[Played], report: TournamentAudit
) -> None:
    """The published standings are the ones the audited logs give."""
    ours = {
        s.entrant: s
        for s in standings(
            sorted(played, key=lambda p: p.index), info.entrants, lowest_wins=info.lowest_wins
        )
    }
    for row in info.standings:
        mine = ours.get(row.entrant)
        if mine is None:
            report.find(f"standings: {row.entrant!r} is no entrant")
            continue
        pairs = {
            "matches": (row.matches, mine.matches),
            "groups": (row.groups, mine.groups),
            "faults": (row.faults, mine.faults),
            "forfeits": (row.forfeits, mine.forfeits),
            "wins": (row.wins, mine.wins),
            "mean": (row.mean if row.has_mean else None, mine.mean),
            "mu": (row.mu if mine.rating else 0.0, mine.rating.mu if mine.rating else 0.0),
        }
        for name, (published, recomputed) in pairs.items():
            if not _same(published, recomputed):
                report.find(
                    f"standings: {row.entrant}'s {name} is {published}, its logs give {recomputed}"
                )
    if len(info.standings) != len(ours):
        report.find(f"standings: {len(info.standings)} rows for {len(ours)} entrants")


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
