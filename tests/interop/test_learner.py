"""docs/research.md's worked example, small: the masked learner trains against the rules bots
in seconds and then beats a random player in its seat on held-out deals."""

from __future__ import annotations

import numpy as np
import pytest

from cardarena.clients.interop.learner import (
    FEATURES,
    Features,
    Learner,
    evaluate,
    interval,
    main,
    play,
    train,
)
from cardarena.clients.interop.pettingzoo import raw_env


def test_the_learner_learns_against_the_rules_bots() -> None:
    env = raw_env("hexathlon", options={"rounds": ["pass", "grand"]})
    learner = Learner(Features(env.layout))
    untrained = Learner(Features(env.layout))
    train(env, learner, episodes=60, opponents="rules", seed=0)
    assert np.abs(learner.theta).sum() > 0
    totals = evaluate(
        env, {"learner": learner, "untrained": untrained, "random": "random"}, 40, "rules"
    )
    gain = interval([a - b for a, b in zip(totals["learner"], totals["random"], strict=True)])
    assert gain.mean - gain.half_width > 0, gain  # better than random, beyond the noise
    assert np.mean(totals["learner"]) > np.mean(totals["untrained"])


def test_only_legal_actions_and_every_decision_is_credited_with_its_round() -> None:
    env = raw_env("triathlon", options={"max_deals": 2})
    learner = Learner(Features(env.layout))
    total, decisions = play(env, 5, 1, learner, "random", np.random.default_rng(5))
    assert env.match is not None and env.match.over
    assert decisions and all(d.phi.shape[1] == len(FEATURES) for d, _ in decisions)
    assert sum({d.round: score for d, score in decisions}.values()) == total
    assert all(
        d.probabilities.sum() == 1.0 or abs(d.probabilities.sum() - 1) < 1e-9 for d, _ in decisions
    )


def test_the_command_trains_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "crazy_sixes", "--players", "3", "--episodes", "6", "--deals", "4"]) == 0
    out = capsys.readouterr().out
    assert "learner − random" in out and "learner − rules" in out
