"""The command line never answers bad input with a traceback (issue 15, item 4): each mistake
is one line naming it, exit code 2, before any work is done; a closed pipe ends quietly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.clients.cli import main
from cardarena.clients.tournament import check_bot, parse_bot
from cardarena.v1 import codec

from .cli import refusal

CARDARENA = Path(sys.executable).parent / "cardarena"
THREE_BOTS = ["--bot", "random", "--bot", "rules", "--bot", "mc"]
TRIATHLON_NOWHERE = ["tournament", "--server", "127.0.0.1:1", "--game", "triathlon"]
"""A tournament against an address nobody listens on: any refusal comes before play."""


@pytest.mark.parametrize("flag", ["--json", "--csv"])
def test_an_unwritable_output_file_is_refused_before_the_tournament(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    # The server address is unreachable: the refusal must come before any attempt to play.
    line = refusal(
        capsys,
        *TRIATHLON_NOWHERE,
        *THREE_BOTS,
        flag,
        "/nonexistent/dir/out.json",
    )
    assert f"argument {flag}: cannot write /nonexistent/dir/out.json: no directory" in line


def test_an_output_that_is_a_directory_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = refusal(capsys, "replay", "log.json", "--html", str(tmp_path))
    assert "is a directory, not a file to write" in line


def test_an_unknown_bot_option_names_the_accepted_ones(capsys: pytest.CaptureFixture[str]) -> None:
    line = refusal(
        capsys,
        *TRIATHLON_NOWHERE,
        "--bot",
        "m=mc,budget=5",
        "--bot",
        "random",
        "--bot",
        "rules",
    )
    assert "bot 'mc' has no option budget; its options: budget_ms" in line


def test_a_python_bot_is_known_by_its_own_name_unless_the_spec_names_it() -> None:
    own = check_bot(parse_bot("tests.tournament_bots:Crasher"))
    assert own.name == "crasher"  # the class is Crasher; the bot calls itself crasher
    named = check_bot(parse_bot("boom=tests.tournament_bots:Crasher"))
    assert named.name == "boom"
    assert check_bot(parse_bot("mc")).name == "mc"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("cardarena ")


@pytest.mark.parametrize("argv", [["games", "--json"], ["demo"]])
def test_a_closed_pipe_ends_quietly(argv: list[str]) -> None:
    """``cardarena games --json | head -1``: the reader leaves early, the writer says nothing."""
    process = subprocess.Popen(
        [str(CARDARENA), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # as head does after its line
    err = process.stderr.read().decode()
    assert process.wait(60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_whole_numbers_from_a_struct_are_ints() -> None:
    """Options travel as doubles in a Struct; a bot must see ``first_dealer: 0``, not 0.0."""
    struct = codec.struct_of({"first_dealer": 0, "fan_tan": {"openers": "seven"}, "x": [2, 2.5]})
    plain = codec.dict_of(struct)
    assert plain == {"first_dealer": 0, "fan_tan": {"openers": "seven"}, "x": [2, 2.5]}
    assert type(plain["first_dealer"]) is int and type(plain["x"][1]) is float
