"""docs/bots.md's "Testing a bot without a server" is run as written: its commands with the
doc's first bot, and its Python example, which writes the same log as the command."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.clients.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"
TITLE = "## Testing a bot without a server"


def section() -> str:
    text = DOC.read_text()
    start = text.index(TITLE)
    end = text.find("\n## ", start + len(TITLE))
    return text[start : end if end >= 0 else None]


def first_bot() -> str:
    blocks: list[str] = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    return blocks[0]


def test_the_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lowbot.py").write_text(first_bot())
    monkeypatch.chdir(tmp_path)
    (shell,) = re.findall(r"```sh\n(.*?)```", section(), re.S)
    commands = [c for c in shell.replace("\\\n", " ").splitlines() if c.strip()]
    assert len(commands) == 2
    for command in commands:
        program, *argv = shlex.split(command)
        assert program == ".venv/bin/cardarena"
        assert main(argv) == 0, command
    assert (tmp_path / "match.html").exists()


def test_the_function_writes_what_the_command_writes(tmp_path: Path) -> None:
    (tmp_path / "lowbot.py").write_text(first_bot())
    (example,) = re.findall(r"```python\n(.*?)```", section(), re.S)
    (tmp_path / "run.py").write_text(example)
    done = subprocess.run(
        [sys.executable, "run.py"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    winners, faults = done.stdout.strip().split("] [")
    assert winners.startswith("[") and faults == "0, 0, 0]"
    from_python = (tmp_path / "match.json").read_bytes()
    (shell,) = re.findall(r"```sh\n(.*?)```", section(), re.S)
    _, *argv = shlex.split(shell.replace("\\\n", " ").splitlines()[0])
    argv = [str(tmp_path / a) if a.endswith((".py:LowBot", ".json", ".html")) else a for a in argv]
    assert main(argv) == 0
    assert (tmp_path / "match.json").read_bytes() == from_python
