"""The fast copy of a match OpenSpiel's searches rely on, and the MCTS example."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from cardarena.clients.interop.clone import clone_match
from cardarena.engine import Match, new_match

from .games import EVERY_COUNT

ROOT = Path(__file__).resolve().parents[2]


def _act(match: Match, action: int) -> None:
    assert match.to_act is not None
    match.apply(match.to_act, action)


def test_a_clone_plays_on_like_the_original_and_apart_from_it() -> None:
    for game, players in EVERY_COUNT:
        rng = random.Random(players)
        match = new_match(game, players=players, seed=bytes(32))
        for _ in range(rng.randrange(5, 80)):
            _act(match, rng.choice(match.legal_actions()))
        copy, log_before = clone_match(match), list(match.log)
        moves = random.Random(9)
        while not copy.over:
            _act(copy, moves.choice(copy.legal_actions()))
        assert match.log == log_before  # the original did not move
        moves = random.Random(9)
        while not match.over:
            _act(match, moves.choice(match.legal_actions()))
        assert match.log == copy.log
        assert match.totals == copy.totals


def test_the_mcts_example_runs_openspiels_mcts_against_random() -> None:
    script = ROOT / "clients" / "examples" / "mcts_vs_random.py"
    done = subprocess.run(
        [sys.executable, str(script), "--matches", "3", "--simulations", "15"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "mean return  mcts:" in done.stdout
