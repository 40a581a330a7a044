"""docs/bots.md is run, not only read: its first bot plays a local match as written, and the
same file loads as ``path/to/bot.py:Class`` the way ``cardarena tournament --bot`` loads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardarena.clients import load_bot
from cardarena.clients.tournament import check_bot, parse_bot

from ..helpers import fenced, run_python

DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def python_blocks() -> list[str]:
    return fenced(DOC.read_text(), "python")


def test_the_first_bot_of_the_docs_plays_a_local_match(tmp_path: Path) -> None:
    bot, run = python_blocks()[:2]
    (tmp_path / "lowbot.py").write_text(bot)
    (tmp_path / "run.py").write_text(run)
    done = run_python("run.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    totals, winners = done.stdout.strip().split(") (")
    assert totals.count(",") == 2 and winners  # three totals, someone won


def test_a_bot_file_loads_by_its_path_and_is_known_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "lowbot.py"
    path.write_text(python_blocks()[0])
    entry = check_bot(parse_bot(f"{path}:LowBot"))
    assert entry.name == "low"
    assert load_bot(f"{path}:LowBot").name == "low"


def test_a_module_that_is_not_found_says_how_to_name_a_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"No module named 'mybot'.*path/to/bot\.py:Class"):
        load_bot("mybot:LowBot")
    with pytest.raises(ValueError, match="cannot load bot"):
        load_bot(f"{tmp_path / 'missing.py'}:LowBot")
