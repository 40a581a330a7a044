"""The results' tables: no column is empty in every row (the kinds of faults only where the
rows know them), and the standings print starts with its first line, not a blank one.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from cardarena.clients.tournament.hosted_report import (
    FAULT_COLUMNS,
    hosted_json,
    print_hosted,
    write_hosted_csv,
)
from cardarena.clients.tournament.ranking import played, rank
from cardarena.clients.tournament.reports import (
    FAULT_KINDS,
    RULES_FIELDS,
    print_table,
    to_json,
    write_csv,
)
from cardarena.competition import standings

from .test_outputs import hosted_info
from .test_standings import NAMES, tournament

# -- no column empty in every row ------------------------------------------------------------


def assert_no_empty_column(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        table = list(csv.DictReader(handle))
    assert table
    for column in table[0]:
        assert any(row[column] for row in table), f"the column {column} is always empty"
    return table


def test_a_hosted_results_table_has_no_always_empty_column(tmp_path: Path) -> None:
    info = hosted_info()
    write_hosted_csv(tmp_path / "s.csv", info)
    table = assert_no_empty_column(tmp_path / "s.csv")
    assert tuple(table[0]) == (*RULES_FIELDS, *FAULT_COLUMNS)
    for row in hosted_json(info)["standings"]:
        assert tuple(row) == (*RULES_FIELDS, *FAULT_COLUMNS)
        # the server's kinds, each a number from the logs, add up to its faults
        assert row["timeouts"] + row["refused_actions"] + row["disconnects"] == row["faults"]


def test_the_runners_table_has_fault_kinds_only_where_its_rows_know_them(tmp_path: Path) -> None:
    whole = tournament()
    write_csv(tmp_path / "runner.csv", rank(whole))
    assert set(FAULT_KINDS) <= set(assert_no_empty_column(tmp_path / "runner.csv")[0])
    rules = standings([played(m) for m in whole.matches if m.ok], NAMES, lowest_wins=True)
    write_csv(tmp_path / "rules.csv", rules)
    assert tuple(assert_no_empty_column(tmp_path / "rules.csv")[0]) == RULES_FIELDS
    report = to_json(whole, rules, {"seed": "00"})
    assert all(tuple(row) == RULES_FIELDS for row in report["standings"])


# -- the standings print ---------------------------------------------------------------------


def test_the_standings_print_starts_with_its_first_line() -> None:
    out = io.StringIO()
    print_hosted(hosted_info(), out)
    assert out.getvalue().startswith("crazy_sixes, 3 players (highest total wins)")
    whole = tournament()
    out = io.StringIO()
    print_table(whole, rank(whole), out)
    assert out.getvalue().startswith("hexathlon, 3 players (lowest total wins)")
