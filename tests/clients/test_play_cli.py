"""``cardarena play``: a match in this process whose log ``cardarena audit`` and ``cardarena
replay --html`` take like a served one; the same seed writes the same file; failing bots are
reported; bad arguments are one-line refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.clients.cli import main
from cardarena.clients.logs import load_log

from .cli import refusal

CARDARENA = Path(sys.executable).parent / "cardarena"
SEED = "ab" * 32
BOTS_FILE = Path(__file__).resolve().parents[1] / "tournament_bots.py"
THREE = ["--bot", "random", "--bot", "rules", "--bot", "random"]


def test_the_log_audits_and_replays_as_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, page = tmp_path / "m.json", tmp_path / "m.html"
    args = ["play", "triathlon", *THREE, "--seed", SEED, "--log", str(log), "--html", str(page)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "seats: 0 random#0, 1 rules, 2 random#2" in out
    assert "totals: random#0 " in out and "won by " in out
    assert f"wrote {log}: " in out and "audit clean" in out
    assert "<!doctype html>" in page.read_text()
    assert main(["audit", str(log)]) == 0
    assert "CLEAN: every check passed" in capsys.readouterr().out
    replayed = tmp_path / "r.html"
    assert main(["replay", str(log), "--html", str(replayed)]) == 0
    assert "audit clean" in capsys.readouterr().out and replayed.exists()
    assert main(["replay", str(log)]) == 0
    assert "audit: clean" in capsys.readouterr().out


def test_the_same_seed_writes_the_same_file(tmp_path: Path) -> None:
    first, second = tmp_path / "a.pb", tmp_path / "b.pb"
    for path in (first, second):
        assert main(["play", "hexathlon", "--bot", "rules", "--players", "4", "--seed", SEED,
                     "--log", str(path), "--quiet"]) == 0  # fmt: skip
    assert first.read_bytes() == second.read_bytes()
    resp = load_log(first)
    assert [s.name for s in resp.match.seats] == [f"rules#{s}" for s in range(4)]
    assert resp.seed.hex() == SEED


@pytest.mark.parametrize("suffix", [".pb", ".json"])
def test_the_same_seed_writes_the_same_file_in_any_process(tmp_path: Path, suffix: str) -> None:
    # A Struct's map (the options) has no fixed byte order from one process to the next.
    files = [tmp_path / f"{n}{suffix}" for n in range(2)]
    for path in files:
        subprocess.run(
            [str(CARDARENA), "play", "hexathlon", *THREE, "--bot", "rules", "--seed", SEED,
             "--quiet", "--log", str(path)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    assert files[0].read_bytes() == files[1].read_bytes()


def test_rounds_are_summed_up_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "hexathlon", "--bot", "a=random", "--bot", "b=rules", "--players", "4",
                 "--seed", SEED]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "round" in out and "  1 pass" in out and "6 trumps" in out
    assert "to play this match again" not in out  # the seed was given
    assert main(["play", "hexathlon", "--bot", "rules", "--players", "4", "--quiet"]) == 0
    quiet = capsys.readouterr().out
    assert "pass" not in quiet and "totals: " in quiet
    assert "to play this match again: --seed " in quiet


def test_a_crashing_bot_is_reported_and_its_log_audits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "m.json"
    args = ["play", "triathlon", "--bot", f"{BOTS_FILE}:Crasher", "--bot", "random",
            "--bot", "rules", "--seed", SEED, "--log", str(log)]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "played by default (time-outs, faults): crasher " in captured.out
    assert "crasher timed out at seq " in captured.err and "ZeroDivisionError" in captured.err
    assert "Traceback" not in captured.err
    assert main(["audit", str(log)]) == 0
    assert load_log(log).match.seats[0].faults > 0


def test_a_program_plays_a_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "first.py"
    program.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'start': print(json.dumps({'ready': True}), flush=True)\n"
        "    elif m['type'] == 'turn': print(json.dumps({'action': m['legal'][0]}), flush=True)\n"
    )
    log = tmp_path / "m.pb"
    bot = f"exec:prog={sys.executable} {program}"
    assert main(["play", "triathlon", "--bot", bot, "--bot", "random", "--bot", "rules",
                 "--seed", SEED, "--log", str(log), "--quiet"]) == 0  # fmt: skip
    resp = load_log(log)
    assert [s.name for s in resp.match.seats] == ["prog", "random", "rules"]
    assert [s.faults for s in resp.match.seats] == [0, 0, 0]


def test_debug_stops_at_the_bots_exception(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ZeroDivisionError):
        main(["play", "triathlon", "--bot", f"{BOTS_FILE}:Crasher", "--bot", "random",
              "--bot", "random", "--debug"])  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nogame", "--bot", "random"], "unknown game 'nogame'"),
        (["triathlon", "--bot", "random", "--bot", "rules"], "played by 3 players, not 2"),
        (["triathlon", *THREE, "--players", "2"], "3 bots for 2 seats"),
        (["triathlon", *THREE, "--seed", "abc"], "a seed is 64 hex digits"),
        (["triathlon", *THREE, "--options", "[1]"], "options must be a JSON object"),
        (["triathlon", *THREE, "--options", '{"end": -1}'], "option end"),
        (["triathlon", *THREE, "--move-ms", "0"], "expected a whole number >= 1"),
        (["triathlon", *THREE, "--log", "/nonexistent/dir/m.json"], "no directory"),
        (["triathlon", *THREE, "--html", "/nonexistent/dir/m.html"], "no directory"),
        (["triathlon", "--bot", "nobot", "--bot", "random", "--bot", "rules"], "random, rules"),
        (["triathlon", "--bot", "mc,budget=5", "--bot", "random", "--bot", "rules"], "no option"),
        (["triathlon", "--bot", "exec:x=/no/such/program", *THREE[:4]], "no program"),
        (["triathlon"], "the following arguments are required: --bot"),
    ],
)
def test_bad_arguments_are_one_line_refusals(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert says in refusal(capsys, "play", *argv)


def test_the_command_is_registered() -> None:
    done = subprocess.run(
        [str(CARDARENA), "--help"], check=True, capture_output=True, text=True, timeout=60
    )
    assert "play one match of bots in this process" in done.stdout
