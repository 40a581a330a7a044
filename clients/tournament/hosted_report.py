"""A hosted tournament's results (the server's standings) for people, programs and sheets.

The rows are the server's (``TournamentInfo.standings``), turned back into
:class:`cardarena.competition.Standing` so that the one table of :mod:`.reports` prints them;
the crosstable and the stop rule follow. The JSON carries every match (id, seats, totals,
faults, forfeits, last hash), so anyone can fetch each log, audit it, and recompute all of it;
and the server's ``TournamentInfo`` exactly as signed (``cardarena audit --results``).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import IO, Any

from cardarena.competition import FaultKinds, Rating, Standing
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..logs.results import INFO_FIELD, info_field
from ..logs.text import totals_json
from .reports import LEGEND, columns, num_text, print_rows, table_rows

HOSTED_LEGEND = LEGEND + "; forfeit: ranked last, scored the worst total at the table"


def standings_of(info: tpb.TournamentInfo) -> list[Standing]:
    return [
        Standing(
            entrant=row.entrant,
            matches=row.matches,
            groups=row.groups,
            mean=row.mean if row.has_mean else None,
            ci_low=row.ci_low if row.has_interval else None,
            ci_high=row.ci_high if row.has_interval else None,
            wins=row.wins,
            faults=row.faults,
            forfeits=row.forfeits,
            rating=Rating(row.mu, row.sigma) if row.matches else None,
            kinds=FaultKinds(row.timeouts, row.refused_actions, row.disconnects),
        )
        for row in info.standings
    ]


def match_status(match: tpb.TournamentMatch) -> str:
    """What became of a planned match, in one word: "not started", "running", "played",
    "void" (every seat forfeited: played out by the server, won by nobody) or "cancelled"
    (it ended without counting: cancelled, or failed)."""
    if not match.match_id:
        return "not started"
    if match.status != spb.MATCH_STATUS_ENDED:
        return "running"
    if match.cancelled:
        return "cancelled"
    return "void" if match.forfeited and all(match.forfeited) else "played"


def summary(info: tpb.TournamentInfo) -> str:
    """How many matches were played, and of those how many were forfeited or void, and how
    many ended without counting: a summary that said only "played" hid matches that every
    seat forfeited."""
    parts = [f"{info.finished} of {info.planned} matches played"]
    if info.void_matches:
        parts.append(f"{info.void_matches} of them void (every seat forfeited)")
    parts.append(f"{info.forfeits} seat forfeit{'s' if info.forfeits != 1 else ''}")
    parts.append(f"{info.failed} cancelled or failed")
    return ", ".join(parts)


def print_hosted(info: tpb.TournamentInfo, out: IO[str], *, legend: bool = True) -> None:
    direction = "lowest total wins" if info.lowest_wins else "highest total wins"
    out.write(
        f"{info.game}, {info.players} players ({direction}): {summary(info)}; tournament"
        f" {info.tournament_id}: {info.end_reason or 'running'}\n"
    )
    print_rows(standings_of(info), out)
    if info.seed:
        out.write(f"tournament seed {info.seed.hex()} (--seed replays its deals)\n")
    if info.crosstable:
        out.write("\npaired differences over shared duplicate groups (positive: first is better)\n")
        for pair in info.crosstable:
            ci = (
                f"[{num_text(pair.ci_low)}, {num_text(pair.ci_high)}]"
                if pair.has_interval
                else "n/a"
            )
            mean = num_text(pair.mean) if pair.has_mean else "n/a"
            out.write(
                f"  {pair.a:>16} vs {pair.b:<16} {mean:>9}  {ci:<19} over {pair.groups} groups\n"
            )
    if info.HasField("sprt"):
        s = info.sprt
        verdict = s.verdict or "undecided"
        out.write(
            f"\nSPRT {s.rule.a} vs {s.rule.b}: llr {s.llr:.3f} in [{s.lower:.3f},"
            f" {s.upper:.3f}] after {s.samples} groups: {verdict}\n"
        )
    if legend:
        out.write(HOSTED_LEGEND + "\n")


def hosted_json(info: tpb.TournamentInfo, *, server: str = "") -> dict[str, Any]:
    rows = standings_of(info)
    return {
        "tournament": {
            "id": info.tournament_id,
            "server": server,
            "game": info.game,
            "players": info.players,
            "lowest_wins": info.lowest_wins,
            "options": codec.dict_of(info.options),
            "entrants": list(info.entrants),
            "deals": info.deals,
            "move_ms": info.time_control.move_ms,
            "planned": info.planned,
            "finished": info.finished,
            "void_matches": info.void_matches,
            "forfeits": info.forfeits,
            "failed": info.failed,
            "ended": info.status == tpb.TOURNAMENT_STATUS_ENDED,
            "end_reason": info.end_reason,
            "seed_commitment": info.seed_commitment,
            "seed": info.seed.hex(),
        },
        "standings": _standings(rows),
        "crosstable": [
            {
                "a": p.a,
                "b": p.b,
                "groups": p.groups,
                "mean": p.mean if p.has_mean else None,
                "ci_low": p.ci_low if p.has_interval else None,
                "ci_high": p.ci_high if p.has_interval else None,
            }
            for p in info.crosstable
        ],
        "matches": [
            {
                "index": m.index,
                "status": match_status(m),
                "match_id": m.match_id,
                "group": m.group,
                "deal": m.deal,
                "rotation": m.rotation,
                "seats": list(m.entrants),
                **totals_json(codec.score_from_pb(t) for t in m.totals),
                "winners": list(m.winners),
                "faults": list(m.faults),
                "forfeited": list(m.forfeited),
                "cancelled": m.cancelled,
                "last_hash": m.last_hash.hex(),
            }
            for m in info.matches
        ],
        # Signed by the server (docs/signatures.md); the message itself, exact, for auditors.
        "results_key_id": info.results_signature.key_id,
        INFO_FIELD: info_field(info),
    }


FAULT_COLUMNS = ("faults", "timeouts", "refused_actions", "disconnects", "forfeits")
"""The server's fault columns, each filled from the logs (the kinds add up to ``faults``)."""


def _standings(rows: list[Standing]) -> list[dict[str, Any]]:
    """The rows as the results file and the CSV have them: the rules' columns, then the
    server's faults, by kind, and forfeits."""
    return [
        {
            **cells,
            "faults": row.faults,
            "timeouts": row.kinds.timeouts,
            "refused_actions": row.kinds.refused,
            "disconnects": row.kinds.disconnects,
            "forfeits": row.forfeits,
        }
        for cells, row in zip(table_rows(rows), rows, strict=True)
    ]


def write_hosted_csv(path: Path, info: tpb.TournamentInfo) -> None:
    rows = standings_of(info)
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=(*columns(rows), *FAULT_COLUMNS))
        writer.writeheader()
        writer.writerows(_standings(rows))
