"""Auditing a whole hosted tournament: every match log, the schedule, and the standings.

What a skeptic of a tournament needs, with no trust in its server: that each match's log is
sound and is the one the tournament recorded (pinned to the last hash it published), that
the matches are the ones the revealed tournament seed plans (every duplicate group dealt from
its group seed, every seat held by the entrant the schedule puts there), and that the
standings the server published are what the logs give when recomputed here with the same
pure rules (``cardarena.competition``). Any difference is a finding; the first ones are
reported, all are counted. With trusted keys, the results' signature and every log's
checkpoint are checked too.

Where the tournament comes from: a server (:func:`audit_tournament`), or a results file and
the logs fetched for it or kept in a directory (:func:`audit_results`). The logs are audited
in worker processes (:mod:`.parallel`): the audit is pure CPU, one log at a time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cardarena.competition import (
    FaultKinds,
    Played,
    group_seed,
    mixed_seed,
    schedule,
)
from cardarena.engine import commitment
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.designs import design_of

from ..client import ArenaClient
from ..logs.bundle import Fetched, fetch_logs, save_logs, save_tournament
from ..logs.files import LogUnavailable
from ..logs.results import INFO_FIELD, ResultsFile, field_shapes, readable_differences
from .parallel import Job, audit_many
from .signature import SIGNATURE_CHECK, TrustedKey, results_finding
from .standings import check_claims, check_standings

NOTES_KEPT = 20


@dataclass
class TournamentAudit:
    tournament_id: str
    matches: int = 0
    audited: int = 0
    findings: list[str] = field(default_factory=list)
    count: int = 0
    signature: str = "not checked"
    """"verified" (the results and every log by a trusted key), "not checked", or "FAILED"."""
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    """One per match: index, match id, ok, and the last finding about it."""
    last: str | None = None
    """The latest finding (kept even when the list of findings is full)."""
    on_its_word: str | None = None
    """What ended the tournament early, where the logs cannot say (a cancellation, the stop
    rule's verdict): vouched for by the signature alone, so an audit without a key says so."""

    @property
    def ok(self) -> bool:
        return self.count == 0

    def as_json(self) -> dict[str, Any]:
        """``cardarena audit --results … --json``: the verdict, the counts, the first findings
        and a verdict per match."""
        return {
            "tournament": self.tournament_id,
            "ok": self.ok,
            "matches": self.matches,
            "audited": self.audited,
            "signature": self.signature,
            "findings": self.count,
            "on_its_word": self.on_its_word,
            "first_findings": self.findings,
            "match_verdicts": self.verdicts,
        }

    def find(self, text: str) -> None:
        self.count += 1
        self.last = text
        if len(self.findings) < NOTES_KEPT:
            self.findings.append(text)


async def audit_tournament(
    client: ArenaClient,
    tournament_id: str,
    *,
    save_dir: Path | None = None,
    keys: list[TrustedKey] | None = None,
    workers: int = 1,
) -> TournamentAudit:
    """Fetch the tournament and every log of it, and check all of it (see the module);
    with ``save_dir``, keep every log there as ``MATCH_ID.pb`` (and the tournament as
    ``tournament.json``), to audit or replay again without the server."""
    info = await client.tournaments.get(tournament_id, matches=True)
    logs = await fetch_logs(client, [m.match_id for m in info.matches if m.match_id])
    if save_dir is not None:
        save_tournament(info, save_dir, "json")
        save_logs(logs, save_dir, "pb")
    return audit_fetched(info, logs, keys=keys, workers=workers)


async def audit_results(
    results: ResultsFile,
    logs: Fetched | None,
    client: ArenaClient | None,
    *,
    keys: list[TrustedKey] | None = None,
    workers: int = 1,
    written: WriteResults | None = None,
) -> TournamentAudit:
    """Audit the tournament of a results file, every log pinned to the hash the file records:
    the logs given (a directory's), else fetched with ``client``. The tournament is the one
    embedded in the file (its signed ``TournamentInfo``), else the server's now. With
    ``written`` (how the results writer turns the message into the file's readable part),
    every readable field must be what it makes of the signed message: an edit of any of them
    is a finding that names the field."""
    info = results.info
    if info is None:
        if client is None:
            raise LogUnavailable(
                f"{results.path} holds no TournamentInfo (written before results were signed):"
                " give --server to fetch the tournament"
            )
        info = await client.tournaments.get(results.tournament_id, matches=True)
    if logs is None:
        if client is None:
            raise LogUnavailable("no logs: give --server, or --logs DIR of fetched logs")
        logs = await fetch_logs(client, [m.match_id for m in info.matches if m.match_id])
    report = audit_fetched(info, logs, keys=keys, workers=workers)
    if written is not None:  # against the message audited: the file's own, or the server's
        for finding in _readable_findings(results, info, written):
            report.find(finding)
    if info.tournament_id != results.tournament_id:
        report.find(
            f"the file names tournament {results.tournament_id}, its info {info.tournament_id}"
        )
    recorded = {m.match_id: m.last_hash.hex() for m in info.matches if m.match_id}
    for match_id, pin in results.pins.items():
        if recorded.get(match_id) != pin:
            report.find(
                f"{results.path}: match {match_id} is pinned to {pin or 'nothing'},"
                f" the tournament records {recorded.get(match_id) or 'no such match'}"
            )
    return report


ADDED_LATER = frozenset(
    {
        "tournament.void_matches",
        "tournament.forfeits",
        "matches[].status",
        "standings[].timeouts",
        "standings[].refused_actions",
        "standings[].disconnects",
    }
)
"""Readable fields today's results writer adds that a file written before them lacks, by
where they stand (``[]``: in every entry of a list): their absence is no edit (every value
they show is in the signed message, and checked there), but only where the file lacks them
everywhere, as an older writer's file does; one dropped here and there is a finding."""


class WriteResults(Protocol):
    """How a results file's readable part is written from the signed message and the server's
    address (``hosted_report.hosted_json``; the audit room cannot import the tournament room)."""

    def __call__(self, info: tpb.TournamentInfo, *, server: str) -> dict[str, Any]: ...


def _readable_findings(
    results: ResultsFile, info: tpb.TournamentInfo, written: WriteResults
) -> list[str]:
    """The readable fields that are not what the signed message gives. The one field no
    signature covers is ``tournament.server``: where the host's server was, a hint for
    fetching the logs (each log is pinned to the hash the signed results record, so a wrong
    address can only fail the fetch, never pass another log off)."""
    head = results.readable.get("tournament")
    server = head.get("server", "") if isinstance(head, dict) else ""
    expected = json.loads(json.dumps(written(info, server=str(server))))
    expected.pop(INFO_FIELD, None)
    return [
        f"{results.path.name}: {difference}"
        for difference in readable_differences(
            expected, results.readable, optional=ADDED_LATER - field_shapes(results.readable)
        )
    ]


def audit_fetched(
    info: tpb.TournamentInfo,
    logs: Fetched,
    *,
    keys: list[TrustedKey] | None = None,
    workers: int = 1,
) -> TournamentAudit:
    """Every check of the module over a tournament and its logs, already in hand."""
    report = TournamentAudit(info.tournament_id, matches=len(info.matches))
    if info.status != tpb.TOURNAMENT_STATUS_ENDED:
        report.find("the tournament has not ended: its seeds and logs are not all public yet")
        return report
    if keys is not None:
        problem = results_finding(info, keys)
        report.signature = "FAILED" if problem else "verified"
        if problem:
            report.find(problem)
    _check_schedule(info, report)
    check_claims(info, report)
    started = [m for m in info.matches if m.match_id]
    jobs = [_job(line, logs.get(line.match_id), keys) for line in started]
    verdicts = audit_many([j for j in jobs if isinstance(j, Job)], workers=workers)
    played = []
    for line, job in zip(started, jobs, strict=True):
        before = report.count
        if isinstance(job, str):
            report.find(f"match {line.index} ({line.match_id}): {job}")
        else:
            failure = verdicts[line.match_id]
            if failure is not None:
                report.find(f"match {line.index} ({line.match_id}): {failure.text}")
                if failure.check == SIGNATURE_CHECK[0]:
                    report.signature = "FAILED"
            else:
                outcome = _check_match(info, line, job.log, report)
                if outcome is not None:
                    played.append(outcome)
        fresh = report.count > before
        report.verdicts.append(
            {
                "index": line.index,
                "match_id": line.match_id,
                "ok": not fresh,
                "finding": report.last if fresh else None,
            }
        )
    report.audited = len(started)
    if report.ok:  # with every log sound, the summary's counts are the logs' too
        _check_counts(info, played, report)
    check_standings(info, played, report)
    return report


def _check_counts(
    info: tpb.TournamentInfo, played: Sequence[Played], report: TournamentAudit
) -> None:
    """The tournament's summary (played, void, forfeits, cancelled) is what its logs give."""
    started = sum(1 for m in info.matches if m.match_id)
    counts = {
        "finished": (info.finished, len(played)),
        "void_matches": (info.void_matches, sum(1 for p in played if all(p.forfeited or [0]))),
        "forfeits": (info.forfeits, sum(sum(p.forfeited) for p in played)),
        "failed": (info.failed, started - len(played)),
    }
    for name, (published, recomputed) in counts.items():
        if published != recomputed:
            report.find(f"the tournament's {name} is {published}, its logs give {recomputed}")


def _job(
    line: tpb.TournamentMatch,
    log: spb.GetMatchLogResponse | LogUnavailable | None,
    keys: list[TrustedKey] | None,
) -> Job | str:
    if log is None:
        return "no log"
    if isinstance(log, LogUnavailable):
        return str(log)
    return Job(log, line.match_id, bytes(line.last_hash), keys)


def tournament_mixed_seed(info: tpb.TournamentInfo) -> bytes | None:
    """The revealed tournament seed mixed with its entrants' contributions (docs/rules.md
    §4.9: empty ones read as none), or ``None`` if the list cannot be the entrants'. A
    tournament from before entries lists none at all: its own seed deals."""
    given = list(info.contributions) or [b""] * len(info.entrants)
    if len(given) != len(info.entrants) or any(c and len(c) != 32 for c in given):
        return None
    return mixed_seed(info.seed, [c or None for c in given])


def _check_schedule(info: tpb.TournamentInfo, report: TournamentAudit) -> None:
    """The revealed seed plans exactly the matches listed, in order, with their entrants."""
    if commitment(info.seed) != info.seed_commitment:
        report.find("the revealed tournament seed does not match its commitment")
        return
    mixed = tournament_mixed_seed(info)
    if mixed is None:
        report.find(
            f"the tournament lists {len(info.contributions)} contributions for"
            f" {len(info.entrants)} entrants, or one that is not 32 bytes"
        )
        return
    try:
        design = design_of(info.pairings)
        plans = schedule(
            mixed,
            deals=info.deals,
            entrants=len(info.entrants),
            players=info.players,
            design=design,
        )
    except ValueError as error:
        report.find(f"the tournament's pairing design cannot be planned: {error}")
        return
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
    """What the tournament says of a match whose log audited clean, against that log."""
    where = f"match {line.index} ({line.match_id})"
    started = pb.Event.FromString(log.entries[0].event).match_started
    if started.tournament_id != info.tournament_id:
        report.find(f"{where}: its log names tournament {started.tournament_id!r}")
    for name, (said, logged) in stated_settings(info, started).items():
        if said != logged:
            report.find(f"{where}: played with {name} {logged!r}, the tournament says {said!r}")
    mixed = tournament_mixed_seed(info)
    if mixed is None or log.seed != group_seed(mixed, line.group):
        report.find(f"{where}: not dealt from its duplicate group's seed")
    names = [s.name for s in sorted(log.match.seats, key=lambda s: s.seat)]
    if names != list(line.entrants):
        report.find(
            f"{where}: its seats are held by {names}, the schedule says {list(line.entrants)}"
        )
    if line.cancelled != log.match.cancelled:
        report.find(
            f"{where}: the tournament lists it as {'cancelled' if line.cancelled else 'counted'},"
            f" its log {'ends cancelled' if log.match.cancelled else 'ends by the rules'}"
        )
    if log.match.cancelled:  # it counts for nothing, so it lists no outcome either
        if line.totals or line.winners or line.faults or line.forfeited:
            report.find(f"{where}: its log ends cancelled, yet the tournament lists an outcome")
        return None
    seats = sorted(log.match.seats, key=lambda s: s.seat)
    played = Played(
        kinds=fault_kinds(log, len(seats)),
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
    listed = tuple(codec.score_from_pb(t) for t in line.totals)
    if listed != played.totals or list(line.winners) != list(played.winners):
        report.find(f"{where}: the tournament lists other totals or winners than its log")
    return played


def stated_settings(
    info: tpb.TournamentInfo | lpb.LadderInfo, started: pb.MatchStarted
) -> dict[str, tuple[Any, Any]]:
    """Each setting a tournament (or a ladder) states for its matches, and the log's own (as
    hashed into its chain at creation): a server that signed other options or another clock
    than it played under is found here."""
    control = info.time_control
    policy = info.fault_policy
    forfeit_after = 0 if policy.WhichOneof("policy") == "fallback" else policy.forfeit_after
    return {
        "game": (info.game, started.game),
        "players": (info.players, started.players),
        "options": (codec.dict_of(info.options), codec.dict_of(started.options)),
        "move_ms": (control.move_ms, started.move_ms),
        "bank_ms": (control.bank_ms, started.bank_ms),
        "increment_ms": (control.increment_ms, started.increment_ms),
        "round_ms": (control.round_ms, started.round_ms),
        "forfeit_after": (forfeit_after, started.forfeit_after),
    }


def fault_kinds(log: spb.GetMatchLogResponse, players: int) -> tuple[FaultKinds, ...]:
    """Each seat's faults by kind, folded from its log as the server folds them: time-outs
    not played for a seat that had already forfeited, refused actions, disconnects."""
    kinds = [FaultKinds()] * players
    for entry in log.entries:
        event = pb.Event.FromString(entry.event)
        kind = event.WhichOneof("kind")
        if kind == "timed_out" and not event.timed_out.forfeited:
            seat, found = event.timed_out.seat, FaultKinds(timeouts=1)
        elif kind == "seat_faulted":
            refused = event.seat_faulted.kind == pb.FAULT_KIND_REFUSED_ACTION
            seat, found = (
                event.seat_faulted.seat,
                FaultKinds(refused=refused, disconnects=not refused),
            )
        else:
            continue
        if 0 <= seat < players:
            kinds[seat] += found
    return tuple(kinds)
