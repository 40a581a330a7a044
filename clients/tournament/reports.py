"""A tournament's results as a table for people, JSON for programs and CSV for spreadsheets.

Why the JSON carries every match (id, seed, seats, totals, faults) beside the standings:
anyone can then fetch a match's log by id, audit it, and recompute the standings.

The rows are :class:`cardarena.competition.Standing`; the runner's own rows
(:class:`~.ranking.BotStanding`) also carry the kinds of their faults, counted by its guard,
which fill the ``crashes`` … ``fallbacks`` columns. A table has those columns only when its
rows know them (:func:`columns`): a hosted tournament's rows are the server's, which counts
faults and forfeits but not their kinds, so its results have no column that is always empty.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from cardarena.competition import Standing

from ..fields import fields_of
from ..logs.text import totals_json
from .config import TournamentConfig
from .faults import Faults
from .outcomes import MatchResult, TournamentResult
from .ranking import BotStanding
from .terminal import Column, write_table

STANDING_FIELDS = ("matches", "groups", "mean", "ci_low", "ci_high", "wins", "win_rate")
RATING_FIELDS = ("mu", "sigma", "ordinal")
FAULT_KINDS = ("crashes", "timeouts", "illegal", "late", "fallbacks")
RULES_FIELDS = ("rank", "bot", *STANDING_FIELDS, *RATING_FIELDS)
"""The columns every table has: what the rules of a competition give."""
CSV_FIELDS = (*RULES_FIELDS, *FAULT_KINDS)
"""The columns of the runner's tables, whose rows know the kinds of their faults."""


def fault_kinds(row: Standing) -> Faults | None:
    """The kinds of a row's faults, if the row knows them (the runner's rows do)."""
    return row.fault_kinds if isinstance(row, BotStanding) else None


def standing_row(rank: int, row: Standing) -> dict[str, Any]:
    """Every column of :data:`CSV_FIELDS` for one row (the kinds ``None`` where it has none)."""
    return {
        "rank": rank,
        "bot": row.entrant,
        **fields_of(row, *STANDING_FIELDS),
        **fields_of(row.rating, *RATING_FIELDS),
        **fields_of(fault_kinds(row), *FAULT_KINDS),
    }


def columns(rows: Sequence[Standing]) -> tuple[str, ...]:
    """The columns of a table of ``rows``: the fault kinds only if a row knows them, so that
    no column is empty in every row."""
    known = any(fault_kinds(row) is not None for row in rows)
    return CSV_FIELDS if known else RULES_FIELDS


def table_rows(rows: Sequence[Standing]) -> list[dict[str, Any]]:
    """Each row, ranked, with the :func:`columns` of the table and nothing else."""
    names = columns(rows)
    return [
        {name: value for name, value in standing_row(rank, row).items() if name in names}
        for rank, row in enumerate(rows, 1)
    ]


def match_json(result: MatchResult) -> dict[str, Any]:
    plan = result.plan
    return {
        "index": plan.index,
        "match_id": result.match_id,
        "group": plan.group,
        "deal": plan.deal,
        "rotation": plan.rotation,
        "seed": plan.seed.hex(),
        "seats": list(result.bots),
        **totals_json(result.totals),
        "winners": list(result.winners),
        "last_hash": result.last_hash.hex(),
        "seconds": round(result.seconds, 3),
        "error": result.error,
        "faults": [f.as_dict() for f in result.faults],
    }


def settings_json(config: TournamentConfig) -> dict[str, Any]:
    """What the tournament was asked to play, for the JSON report's header."""
    return {
        "server": config.address,
        **fields_of(config, "options", "deals", "concurrency", "move_ms"),
        "decision_ms": round(config.decision_s * 1000),
        "seed": config.seed.hex(),
        "bot_specs": {b.name: b.describe() for b in config.bots},
    }


def to_json(
    result: TournamentResult, rows: Sequence[Standing], settings: dict[str, Any]
) -> dict[str, Any]:
    kinds = columns(rows) == CSV_FIELDS
    return {
        "tournament": {
            **settings,
            "game": result.game,
            "players": result.players,
            "lowest_wins": result.lowest_wins,
            "bots": result.bots,
            "matches": len(result.matches),
            "failed": len(result.failed),
            "seconds": round(result.seconds, 3),
        },
        "standings": [
            {**cells, **({"fault_notes": _notes(row)} if kinds else {})}
            for cells, row in zip(table_rows(rows), rows, strict=True)
        ],
        "matches": [match_json(m) for m in result.matches],
    }


def write_csv(path: Path, rows: Sequence[Standing]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns(rows))
        writer.writeheader()
        writer.writerows(table_rows(rows))


LEGEND = (
    "mean: points per match, its 95% interval over duplicate groups (one deal in every seat "
    "rotation); win rate: shared wins split; rating: OpenSkill Plackett-Luce"
)


def print_table(result: TournamentResult, rows: Sequence[Standing], out: IO[str]) -> None:
    """The standings, then one line per bot with faults, then any failed match."""
    groups = len({m.plan.group for m in result.matches})
    direction = "lowest total wins" if result.lowest_wins else "highest total wins"
    out.write(
        f"{result.game}, {result.players} players ({direction}): {len(result.matches)} matches "
        f"in {groups} duplicate groups, {result.seconds:.1f} s\n"
    )
    print_rows(rows, out)
    for row in rows:
        f = fault_kinds(row)
        if f is not None and (f.total or f.fallbacks):
            out.write(
                f"faults of {row.entrant}: {f.crashes} crashes, {f.timeouts} timeouts, "
                f"{f.illegal} illegal, {f.late} late; {f.fallbacks} moves played by the runner\n"
            )
            for note in f.notes[:3]:
                out.write(f"    e.g. {note}\n")
    for failed in result.failed:
        out.write(
            f"match {failed.plan.index} ({failed.match_id or 'not created'}) FAILED: {failed.error}\n"
        )


STANDINGS_COLUMNS = (
    Column("#", 2, numeric=True),
    Column("bot", 16),
    Column("matches", 7, numeric=True),
    Column("mean", 9, numeric=True),
    Column("95% CI", 19),
    Column("win rate", 8, numeric=True),
    Column("rating μ ± σ", 14),
    Column("faults", 6, numeric=True),
)
FORFEITS = Column("forfeits", 8, numeric=True)


def print_rows(rows: Sequence[Standing], out: IO[str]) -> None:
    """The standings table itself, best first; forfeits beside the faults when there are any."""
    forfeits = any(row.forfeits for row in rows)
    cells = []
    for rank, row in enumerate(rows, 1):
        ci = (
            f"[{num_text(row.ci_low)}, {num_text(row.ci_high)}]"
            if row.ci_low is not None
            else "n/a"
        )
        rate = f"{row.win_rate:.1%}" if row.win_rate is not None else "n/a"
        rating = f"{row.rating.mu:5.1f} ± {row.rating.sigma:4.1f}" if row.rating else "n/a"
        line = [str(rank), row.entrant, str(row.matches), num_text(row.mean), ci, rate, rating]
        cells.append([*line, str(row.faults), *([str(row.forfeits)] if forfeits else [])])
    columns = (*STANDINGS_COLUMNS, *((FORFEITS,) if forfeits else ()))
    write_table(columns, cells, out, first="bot")


def _notes(row: Standing) -> list[str]:
    kinds = fault_kinds(row)
    return list(kinds.notes) if kinds else []


def num_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value + 0.0:.2f}" if abs(value) >= 0.005 else "0.00"  # never "-0.00"
