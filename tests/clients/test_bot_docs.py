"""docs/bots.md is run, not only read: its path set-up, its first bot (a local match as written,
and the tournament command on a server of one's own, from a folder that is not the clone), the
bot that meets every kind of action, and the card helpers' printed output; and its tables are
held to the code: every action kind a bot can be offered, and every field of ``SeatState``
with its type."""

from __future__ import annotations

import dataclasses
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import cardarena.clients
from cardarena.clients import SeatState, load_bot
from cardarena.clients.bots import play_local
from cardarena.clients.tournament import check_bot, parse_bot
from cardarena.engine.actions import MAX_ACTION, describe, is_action, parse
from cardarena.engine.cards import is_card

from ..helpers import fenced, run_as_newcomer, run_python
from ..serverproc import CARDARENA, ServerProcess

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "bots.md"
SETUP = "## The `cardarena` command, from any directory"
FIRST = "## A first bot in ten lines"
ACTIONS = "## What a bot is offered: the actions"
FIELDS = "## What a bot sees: `SeatState`"
CARDS = "## Cards, suits and ranks"
DOC_ADDRESS = "127.0.0.1:50051"


def python_blocks() -> list[str]:
    return fenced(DOC.read_text(), "python")


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end >= 0 else None]


def table(text: str) -> list[list[str]]:
    """The body rows of the Markdown tables in ``text``, cells stripped, ``\\|`` unescaped."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", r)[1:-1]] for r in rows]
    return [row for row in cells if not set(row[0]) <= {"-"} and row[0] not in {"field", "kind"}]


def code(cell: str) -> str:
    """The first `code` span of a table cell."""
    found = re.search(r"`([^`]*)`", cell)
    assert found, cell
    return found.group(1)


def kind_of(action: int) -> str:
    return "card" if is_card(action) else describe(action).split(":")[0]


def cardarena_lines(block: str) -> list[list[str]]:
    """The block's `cardarena` command lines, as this venv's command."""
    return [
        [str(CARDARENA), *(arg for arg in shlex.split(line)[1:] if arg != "&")]
        for line in block.splitlines()
        if line.startswith("cardarena ")
    ]


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


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git clone")
def test_the_set_up_puts_the_clones_venv_first_and_leaves_the_clone(tmp_path: Path) -> None:
    """Run in the clone as the doc says, all but the install (which this venv already is)."""
    (setup,) = fenced(section(SETUP), "sh")
    install, *rest = [line for line in setup.splitlines() if line.strip()]
    assert install.split("#")[0].split() == ["bash", "scripts/bootstrap.sh"]
    script = "\n".join([*rest, 'echo "$PATH"', "pwd", "command -v cardarena || true"])
    path, folder, *found = run_as_newcomer(script, ROOT, tmp_path)
    assert path.split(":")[0] == str(ROOT / ".venv" / "bin")
    assert Path(folder) == tmp_path / "bots"
    if (ROOT / ".venv" / "bin" / "cardarena").exists():
        assert found == [str(ROOT / ".venv" / "bin" / "cardarena")]


@pytest.mark.integration
def test_the_tournament_command_runs_from_a_folder_of_ones_own(tmp_path: Path) -> None:
    (tmp_path / "lowbot.py").write_text(python_blocks()[0])
    (shell,) = fenced(section(FIRST), "sh")
    assert shell.strip().splitlines()[-1].split("#")[0].strip() == "kill %1"
    serve, tournament = cardarena_lines(shell)
    assert serve[1:4] == ["serve", "--listen", DOC_ADDRESS]
    assert "--server" in tournament and "--deals" in tournament
    with ServerProcess(tmp_path / serve[serve.index("--data-dir") + 1]) as server:
        argv = [server.address if arg == DOC_ADDRESS else arg for arg in tournament]
        done = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False
        )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert all(name in done.stdout for name in ("low", "random", "rules"))


def test_the_action_table_is_every_kind_of_action_with_its_ids() -> None:
    rows = table(section(ACTIONS))
    texts = [text for row in rows for text in re.findall(r"`([^`]*)`", row[-1])]
    actions = [parse(text, spanish_deck=text[-1] in "OEB") for text in texts]
    assert [describe(action) for action in actions] == texts
    assert {kind_of(action) for action in actions} == {"card", "pass", "exclude", "trump"}
    # The ids the doc gives for the non-card kinds, (120), (124..127), (128..131), are all there
    # are: every action id that is not a card.
    documented: set[int] = set()
    for row in rows[1:]:
        (low, high), *_ = re.findall(r"\((\d+)(?:\.\.(\d+))?\)", row[2])
        documented |= set(range(int(low), int(high or low) + 1))
    assert documented == {a for a in range(MAX_ACTION + 64) if is_action(a) and not is_card(a)}


def test_the_bot_that_handles_every_kind_is_offered_every_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bot, run = python_blocks()[2:4]
    assert "class LongSuitBot" in bot and "from longsuit import LongSuitBot" in run
    (tmp_path / "longsuit.py").write_text(bot)
    (tmp_path / "run.py").write_text(run)
    done = run_python("run.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3

    offered: set[str] = set()

    def recording(game: str, bots: Sequence[Any], seed: bytes, **options: Any) -> Any:
        choose: Callable[[SeatState], int] = bots[0].choose

        def spy(state: SeatState) -> int:
            offered.update(kind_of(action) for action in state.legal)
            action = choose(state)
            assert action in state.legal
            return action

        bots[0].choose = spy
        return play_local(game, bots, seed, **options)

    monkeypatch.setattr(cardarena.clients, "play_local", recording, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "longsuit", raising=False)
    exec(compile(run, str(DOC), "exec"), {})
    assert offered == {"card", "pass", "exclude", "trump"}
    assert capsys.readouterr().out == done.stdout


def test_the_seat_state_table_is_every_field_with_its_type() -> None:
    text = section(FIELDS)
    documented = {code(row[0]): code(row[1]) for row in table(text)}
    fields = {f.name: str(f.type) for f in dataclasses.fields(SeatState)}
    public = {name: kind.replace("ev.", "") for name, kind in fields.items() if name[0] != "_"}
    assert documented == public
    plumbing = {"observe", "note_turn", "note_clocks"}  # what the runners call, not bots
    for name in vars(SeatState):
        if name[0] != "_" and name not in fields and name not in plumbing:
            assert f"`{name}" in text, f"SeatState.{name} is not in docs/bots.md"


def test_the_card_helpers_print_what_the_doc_says(capsys: pytest.CaptureFixture[str]) -> None:
    text = section(CARDS)
    (example,) = fenced(text, "python")
    (printed,) = fenced(text, "text")
    exec(compile(example, str(DOC), "exec"), {})
    assert capsys.readouterr().out == printed
