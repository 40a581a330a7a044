"""The games as a PettingZoo AEC environment: PettingZoo's API and seed tests for every game and
player count, and rewards that add up to the engine's scores."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from cardarena.clients.interop.pettingzoo import env
from cardarena.engine import GAMES, CardSet

from .games import EVERY_COUNT

pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_pettingzoo_api_test_passes(game: str, players: int) -> None:
    api_test(env(game, players=players), num_cycles=1000)


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_pettingzoo_seed_test_passes(game: str, players: int) -> None:
    seed_test(lambda: env(game, players=players), num_cycles=200)


@pytest.mark.parametrize("game", list(GAMES))
def test_rewards_add_up_to_the_signed_totals(game: str) -> None:
    e = env(game, options={"max_deals": 3} if game == "triathlon" else None)
    e.reset(seed=5)
    rng = np.random.default_rng(5)
    earned = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        observation, reward, termination, truncation, _ = e.last()
        earned[agent] += reward
        if termination or truncation:
            e.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        assert e.match is not None
        assert list(legal) == e.match.legal_actions()
        e.step(int(rng.choice(legal)))
    sign = -1 if GAMES[game].lowest_wins else 1
    assert e.match is not None
    totals = [sign * float(t) for t in e.match.totals]
    assert list(earned.values()) == pytest.approx(totals)


def test_a_seed_gives_the_same_deals_and_info_names_the_deal_seed() -> None:
    first, second = env("hexathlon"), env("hexathlon")
    first.reset(seed=11)
    second.reset(seed=11)
    assert first.match is not None and second.match is not None
    assert first.match.log == second.match.log
    assert first.infos["seat_0"]["seed"] == second.infos["seat_0"]["seed"]
    second.reset(seed=12)
    assert first.match.log != second.match.log


def test_ansi_render_shows_the_seat_to_act_its_own_hand_only() -> None:
    e = env("pentathlon", players=3, render_mode="ansi")
    e.reset(seed=3)
    assert e.match is not None and e.match.to_act is not None
    text = e.render()
    assert text is not None
    seat = e.match.to_act
    assert f"viewer={seat};" in text
    assert f"hand={CardSet(e.match.hands[seat])};" in text
