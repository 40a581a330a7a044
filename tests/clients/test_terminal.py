"""The command line's tables, progress and errors: rich in a terminal, plain text elsewhere
(a pipe, a file or a test reads the same columns as ever)."""

from __future__ import annotations

import io

import pytest

from cardarena.clients.cli import main
from cardarena.clients.tournament.progress import Progress
from cardarena.clients.tournament.reports import print_rows
from cardarena.clients.tournament.terminal import print_error
from cardarena.competition import Rating, Standing


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


ROWS = [
    Standing("rules", 12, 4, 1.5, 0.5, 2.5, 7.0, 2, 0, Rating(27.1, 3.2)),
    Standing("random", 12, 4, -1.5, -2.5, -0.5, 2.0, 0, 1, Rating(22.9, 3.2)),
]


def test_standings_are_plain_fixed_width_text_off_a_terminal() -> None:
    out = io.StringIO()
    print_rows(ROWS, out)
    header, rule, first, second = out.getvalue().splitlines()
    assert header.split() == [
        "#", "bot", "matches", "mean", "95%", "CI", "win", "rate", "rating", "μ", "±", "σ",
        "faults", "forfeits",
    ]  # fmt: skip
    assert set(rule) == {"-"} and len(rule) == len(header)
    assert first.split()[:4] == ["1", "rules", "12", "1.50"] and "[0.50, 2.50]" in first
    assert second.split()[-1] == "1"  # the forfeits column, shown because one forfeited
    assert "\x1b[" not in out.getvalue()


def test_standings_are_a_rich_table_in_a_terminal() -> None:
    out = Terminal()
    print_rows(ROWS, out)
    text = out.getvalue()
    assert "─" in text  # rich's rule under the header
    assert "rules" in text and "[0.50, 2.50]" in text and "forfeits" in text


def test_an_error_is_one_line_plain_or_bold_red() -> None:
    plain, styled = io.StringIO(), Terminal()
    print_error("cardarena x", "no such thing [here]", plain)
    print_error("cardarena x", "no such thing [here]", styled)
    assert plain.getvalue() == "cardarena x: no such thing [here]\n"
    assert "\x1b[1;31m" in styled.getvalue() and "no such thing [here]" in styled.getvalue()


def test_a_usage_error_is_still_one_line_and_exit_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["play", "triathlon", "--bot", "random", "--seed", "zz"])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "cardarena play: error: argument --seed: a seed is 64 hex digits, got 'zz'"
    )


def test_progress_draws_rich_in_a_terminal_and_plain_when_asked_elsewhere() -> None:
    tty = Terminal()
    bar = Progress(3, label="triathlon", stream=tty)
    assert bar.enabled
    for _ in range(3):
        bar.advance(faults=1)
    bar.close()
    assert "triathlon" in tty.getvalue() and "3/3" in tty.getvalue()
    assert "faults 3" in tty.getvalue()
    plain = io.StringIO()
    forced = Progress(2, label="t", stream=plain, enabled=True)
    forced.advance()
    forced.advance()
    forced.close()
    assert "\r" in plain.getvalue() and "2/2" in plain.getvalue()
    assert Progress(2, stream=io.StringIO()).enabled is False
