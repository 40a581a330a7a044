"""The runner's standings: its results ranked by cardarena.competition, and its reports.

The rules themselves (standings, ratings, intervals) are tested in tests/competition/; here
the adapter from a MatchResult, the faults of failed matches, and what the reports write.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from cardarena.clients.tournament.faults import Faults
from cardarena.clients.tournament.outcomes import MatchResult, TournamentResult
from cardarena.clients.tournament.ranking import BotStanding, played, rank
from cardarena.clients.tournament.reports import (
    CSV_FIELDS,
    print_table,
    standing_row,
    to_json,
    write_csv,
)
from cardarena.competition import MatchPlan, Played, Standing, standings

ROTATIONS = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
NAMES = ["a", "b", "c"]


def result(
    index: int, totals: tuple[int, ...], winners: tuple[int, ...], *, error: str | None = None
) -> MatchResult:
    group, rotation = divmod(index, 3)
    seats = ROTATIONS[rotation]
    plan = MatchPlan(index, group, group, rotation, bytes([group]) * 32, seats)
    return MatchResult(
        plan,
        tuple(NAMES[b] for b in seats),
        match_id=f"m{index}",
        totals=() if error else totals,
        winners=() if error else winners,
        faults=tuple(Faults() for _ in seats),
        error=error,
    )


def tournament() -> TournamentResult:
    """The matches of tests/competition/test_standings.py, and one that failed."""
    matches = [
        result(0, (1, 2, 3), (0,)),
        result(1, (4, 5, 6), (0,)),
        result(2, (7, 7, 9), (0, 1)),
        result(3, (0, 0, 0), (0, 1, 2)),
        result(4, (2, 1, 3), (1,)),
        result(5, (4, 2, 6), (1,)),
        result(6, (), (), error="UNAVAILABLE: gone"),
    ]
    matches[1].faults[2].timeouts = 1  # a, at seat 2 of match 1
    matches[1].faults[2].fallbacks = 3
    matches[6].faults[0].crashes = 2  # a, at seat 0 of the failed match
    matches[6].faults[0].note("crashed twice")
    return TournamentResult("hexathlon", 3, True, NAMES, matches)


def test_a_match_result_is_played_with_its_fault_totals() -> None:
    match = tournament().matches[1]
    assert played(match) == Played(1, 0, ("b", "c", "a"), (4, 5, 6), (0,), (0, 0, 1), ())


def test_the_runner_ranks_by_the_rules_and_counts_faults_of_failed_matches() -> None:
    whole = tournament()
    rows = rank(whole)
    rules = standings([played(m) for m in whole.matches if m.ok], NAMES, lowest_wins=True)
    assert [r.entrant for r in rows] == [r.entrant for r in rules] == ["a", "c", "b"]
    a = rows[0]
    assert isinstance(a, BotStanding) and isinstance(a, Standing)
    assert (a.matches, a.groups, a.rating) == (6, 2, rules[0].rating)
    assert a.mean == pytest.approx(19 / 6)
    assert a.faults == 3  # the timeout of a finished match and two crashes of the failed one
    assert rules[0].faults == 1  # the rules see finished matches only
    assert (a.fault_kinds.crashes, a.fault_kinds.timeouts, a.fault_kinds.fallbacks) == (2, 1, 3)
    assert a.fault_kinds.notes == ["crashed twice"]


def test_the_reports_keep_their_fields(tmp_path: Path) -> None:
    whole = tournament()
    rows = rank(whole)
    row = standing_row(1, rows[0])
    assert tuple(row) == CSV_FIELDS
    assert (row["bot"], row["crashes"], row["timeouts"], row["fallbacks"]) == ("a", 2, 1, 3)
    report = to_json(whole, rows, {"seed": "00"})
    assert json.loads(json.dumps(report))["standings"][0]["fault_notes"] == ["crashed twice"]
    assert report["tournament"]["failed"] == 1
    write_csv(tmp_path / "s.csv", rows)
    with (tmp_path / "s.csv").open() as f:
        read = list(csv.DictReader(f))
    assert [r["bot"] for r in read] == ["a", "c", "b"] and read[0]["crashes"] == "2"
    out = io.StringIO()
    print_table(whole, rows, out)
    text = out.getvalue()
    assert " 1  a " in text and "faults of a: 2 crashes, 1 timeouts" in text
    assert "match 6 (m6) FAILED: UNAVAILABLE: gone" in text


def test_a_row_of_the_rules_alone_has_no_fault_kinds() -> None:
    whole = tournament()
    rules = standings([played(m) for m in whole.matches if m.ok], NAMES, lowest_wins=True)
    row = standing_row(1, rules[0])
    assert (row["bot"], row["crashes"], row["late"]) == ("a", None, None)
    out = io.StringIO()
    print_table(whole, rules, out)
    assert "faults of" not in out.getvalue()
