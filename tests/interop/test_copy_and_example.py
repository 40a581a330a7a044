"""The copies OpenSpiel's searches make of a state, and the MCTS example."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyspiel
import pytest

from cardarena.clients.interop import openspiel

from .games import EVERY_COUNT

ROOT = Path(__file__).resolve().parents[2]


def _play(state: Any, rng: random.Random, steps: int | None = None) -> None:
    while not state.is_terminal() and (steps is None or steps > 0):
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probabilities)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        if steps is not None:
            steps -= 1


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_a_copied_state_plays_on_like_the_original_and_apart_from_it(
    game: str, players: int
) -> None:
    """``state.clone()`` (the engine's fork inside, not a deep copy): playing the copy leaves
    the original as it was, and the same moves give both the same match."""
    state = pyspiel.load_game(openspiel.short_name(game), {"players": players}).new_initial_state()
    _play(state, random.Random(players), steps=random.Random(players).randrange(60, 200))
    copy, before = state.clone(), str(state)
    log_before = list(state.table.match.log)
    _play(copy, random.Random(9))
    assert str(state) == before
    assert state.table.match.log == log_before
    _play(state, random.Random(9))
    assert state.table.match.log == copy.table.match.log
    assert state.returns() == copy.returns()
    assert state.history() == copy.history()


@pytest.mark.parametrize("bot", ["mcts", "ismcts"])
def test_the_example_runs_openspiels_search_against_random(bot: str) -> None:
    script = ROOT / "clients" / "examples" / "mcts_vs_random.py"
    done = subprocess.run(
        [sys.executable, str(script), "--bot", bot, "--matches", "3", "--simulations", "15"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"mean return  {bot}:" in done.stdout
