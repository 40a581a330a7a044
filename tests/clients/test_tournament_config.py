"""``cardarena tournament --config cup.toml``: a competition as a file (issue 15, item 5).

Every flag can come from the file, through the flag's own checks; the command line wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardarena.clients.cli import main

from ..serverproc import ServerProcess
from .cli import refusal

CUP = """
server = "127.0.0.1:1"  # nobody there: the command line's --server must win
game = "triathlon"
bot = ["random", "r2=random", "r3=random"]
deals = 1
concurrency = 3
no_progress = true

[options]
max_deals = 1
"""


@pytest.mark.integration
def test_a_tournament_from_a_file_with_a_flag_that_overrides_it(
    tmp_path: Path, server_process: ServerProcess
) -> None:
    cup = tmp_path / "cup.toml"
    cup.write_text(CUP)
    out = tmp_path / "results.json"
    code = main(
        ["tournament", "--config", str(cup), "--server", server_process.address, "--json", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    settings = report["tournament"]
    assert settings["game"] == "triathlon" and settings["options"]["max_deals"] == 1
    assert (
        settings["server"] == server_process.address
    )  # the command line's, not the file's default
    assert len(report["matches"]) == 3  # one deal in each rotation of three seats
    assert {row["bot"] for row in report["standings"]} == {"random", "r2", "r3"}


def test_an_unknown_key_is_refused_with_the_keys_there_are(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cup = tmp_path / "cup.toml"
    cup.write_text('game = "triathlon"\nbots = ["random"]\n')
    line = refusal(capsys, "tournament", "--config", str(cup))
    assert "no flag 'bots'" in line and "bot" in line.split("the keys are the flags:")[1]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('deals = 0\ngame = "x"\nbot = ["random"]', "deals"),
        ('seed = "abc"\ngame = "x"\nbot = ["random"]', "seed"),
        ("game = [", "is not a TOML file"),
        ('no_progress = "yes"', "no_progress is true or false"),
    ],
)
def test_a_bad_value_is_refused_as_the_flag_would_be(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, says: str
) -> None:
    cup = tmp_path / "cup.toml"
    cup.write_text(text)
    assert says in refusal(capsys, "tournament", "--config", str(cup))


def test_without_a_game_or_bots_it_says_what_is_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = refusal(capsys, "tournament", "--bot", "random")
    assert "name the game and the bots" in line
