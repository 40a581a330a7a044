"""The README's "Write a bot in five minutes" is run as a newcomer would run it, from a folder of
their own rather than the clone: the path set up as written, the bot file as written, the
serverless match, then the tournament on a server of one's own (here on 127.0.0.1:0 instead
of the README's port, which a test must not take)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from ..helpers import run_as_newcomer
from ..serverproc import CARDARENA, ServerProcess

ROOT = Path(__file__).resolve().parents[2]
START = "## Write a bot in five minutes"
README_ADDRESS = "127.0.0.1:50051"

pytestmark = pytest.mark.integration


def section() -> str:
    text = (ROOT / "README.md").read_text()
    begin = text.index(START)
    return text[begin : text.index("\n## ", begin)]


def commands(block: str) -> list[list[str]]:
    """The block's `cardarena` command lines, as this venv's `cardarena` (which the README's
    PATH line puts first on the path)."""
    lines = [line for line in block.splitlines() if line.strip()]
    return [
        [str(CARDARENA), *(arg for arg in shlex.split(line)[1:] if arg != "&")]
        for line in lines
        if line.startswith("cardarena ")
    ]


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git clone")
def test_the_path_line_puts_the_clones_venv_first(tmp_path: Path) -> None:
    (setup, *_) = re.findall(r"```sh\n(.*?)```", section(), re.S)
    script = f'{setup}\necho "$PATH"\npwd\n'
    path, folder = run_as_newcomer(script, ROOT, tmp_path)
    assert path.split(":")[0] == str(ROOT / ".venv" / "bin")
    assert Path(folder) == tmp_path / "bots"


def test_the_first_bot_plays_locally_then_in_a_tournament(tmp_path: Path) -> None:
    text = section()
    (bot,) = re.findall(r"```python\n(.*?)```", text, re.S)
    _, local, hosted = re.findall(r"```sh\n(.*?)```", text, re.S)
    (tmp_path / "lowbot.py").write_text(bot)

    (play,) = commands(local)
    played = run(play, tmp_path)
    assert "low" in played.stdout
    assert (tmp_path / "low.html").read_text().startswith("<!doctype html")

    serve, tournament = commands(hosted)
    assert serve[1:4] == ["serve", "--listen", README_ADDRESS]  # the `&` is the shell's
    assert "--server" in tournament and "--deals" in tournament
    with ServerProcess(tmp_path / serve[serve.index("--data-dir") + 1]) as server:
        argv = [server.address if arg == README_ADDRESS else arg for arg in tournament]
        standings = run(argv, tmp_path).stdout
    assert "low" in standings and "rules" in standings and "random" in standings
