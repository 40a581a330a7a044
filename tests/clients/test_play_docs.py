"""docs/bots.md's "Testing a bot without a server" is run as written: its commands with the
doc's first bot, and its Python example, which writes the same log as the command."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from cardarena.clients.cli import main

from ..helpers import fenced, run_python

DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"
TITLE = "## Testing a bot without a server"


def section() -> str:
    text = DOC.read_text()
    start = text.index(TITLE)
    end = text.find("\n## ", start + len(TITLE))
    return text[start : end if end >= 0 else None]


def first_bot() -> str:
    return fenced(DOC.read_text(), "python")[0]


def test_the_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lowbot.py").write_text(first_bot())
    monkeypatch.chdir(tmp_path)
    (shell,) = fenced(section(), "sh")
    commands = [c for c in shell.replace("\\\n", " ").splitlines() if c.strip()]
    assert len(commands) == 2
    for command in commands:
        program, *argv = shlex.split(command)
        assert program == "cardarena"  # the venv's, on the path as the doc sets it up
        assert main(argv) == 0, command
    assert (tmp_path / "match.html").exists()


def test_the_function_writes_what_the_command_writes(tmp_path: Path) -> None:
    (tmp_path / "lowbot.py").write_text(first_bot())
    (example,) = fenced(section(), "python")
    (tmp_path / "run.py").write_text(example)
    done = run_python("run.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    winners, faults = done.stdout.strip().split("] [")
    assert winners.startswith("[") and faults == "0, 0, 0]"
    from_python = (tmp_path / "match.json").read_bytes()
    (shell,) = fenced(section(), "sh")
    _, *argv = shlex.split(shell.replace("\\\n", " ").splitlines()[0])
    argv = [str(tmp_path / a) if a.endswith((".py:LowBot", ".json", ".html")) else a for a in argv]
    assert main(argv) == 0
    assert (tmp_path / "match.json").read_bytes() == from_python
