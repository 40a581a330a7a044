"""The games as a PettingZoo AEC environment: PettingZoo's API, seed and render tests for every
game and player count, its conventions (``env()`` wrapped, ``raw_env()`` bare), no hidden state
in ``info``, and rewards that add up to the engine's scores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from cardarena.clients.interop.bounds import bounds
from cardarena.clients.interop.params import setup_of
from cardarena.clients.interop.pettingzoo import CardArenaEnv, env, raw_env
from cardarena.engine import GAMES, CardSet, legal_actions_for

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
        match = e.unwrapped.match
        assert match.to_act is not None  # its Jokers under its own numbers
        assert list(legal) == legal_actions_for(match, match.to_act)
        e.step(int(rng.choice(legal)))
    sign = -1 if GAMES[game].lowest_wins else 1
    totals = [sign * float(t) for t in e.unwrapped.match.totals]
    assert list(earned.values()) == pytest.approx(totals)


def test_raw_env_passes_the_api_test_too() -> None:
    api_test(raw_env("crazy_sixes", players=3), num_cycles=300)


def test_a_seed_gives_the_same_deals() -> None:
    first, second = raw_env("hexathlon"), raw_env("hexathlon")
    first.reset(seed=11)
    second.reset(seed=11)
    assert first.match is not None and second.match is not None
    assert first.match.log == second.match.log
    second.reset(seed=12)
    assert first.match.log != second.match.log


@pytest.mark.parametrize("game", list(GAMES))
def test_info_holds_no_deal_seed_unless_debugging_asks(game: str) -> None:
    """The deal seed decides every hand: rebuilt from it, the match shows them all. So no
    agent's ``info`` has it, nor anything else; ``reveal_deal_seed=True`` (a debugging mode)
    puts it in every agent's ``info["deal_seed"]``, and it does rebuild the deal."""
    e = env(game)
    e.reset(seed=3)
    assert all(e.infos[a] == {} for a in e.possible_agents)
    assert e.last()[4] == {}
    debugging = raw_env(game, reveal_deal_seed=True)
    debugging.reset(seed=3)
    seed = debugging.infos["seat_0"]["deal_seed"]
    assert all(debugging.infos[a] == {"deal_seed": seed} for a in debugging.possible_agents)
    rebuilt = setup_of(game, {}).start(bytes.fromhex(seed))
    assert debugging.match is not None
    assert rebuilt.hands == debugging.match.hands


def test_env_is_wrapped_and_raw_env_is_bare() -> None:
    wrapped = env("triathlon")
    assert isinstance(wrapped, OrderEnforcingWrapper)
    assert type(wrapped.unwrapped) is CardArenaEnv
    assert type(raw_env("triathlon")) is CardArenaEnv
    with pytest.raises(AssertionError, match="reset"):
        wrapped.step(0)
    with pytest.raises(AssertionError, match="reset"):
        wrapped.observe("seat_0")


def test_an_illegal_action_ends_the_match_with_the_worst_reward(caplog: Any) -> None:
    """Through ``env()`` an illegal action is PettingZoo's usual illegal move (every agent
    terminated, the mover's reward ``illegal_reward``, by default the worst total the game
    allows), not the engine's exception; an action outside the space is refused."""
    e = env("pentathlon", players=3)
    e.reset(seed=1)
    observation, *_ = e.last()
    mover = e.agent_selection
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    e.step(illegal)
    assert "Illegal move" in caplog.text
    assert all(e.terminations.values())
    assert e.rewards[mover] == e.unwrapped.worst_total < 0
    assert e.unwrapped.worst_total == -bounds(e.unwrapped.setup).high  # the lowest total wins
    other = env("pentathlon", players=3, illegal_reward=-1.0)
    other.reset(seed=1)
    other.last()
    other.step(illegal)
    assert other.rewards[mover] == -1.0
    with pytest.raises(AssertionError):
        other.reset(seed=1)
        other.last()
        other.step(999)


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_pettingzoo_render_test_passes(game: str, players: int, capsys: Any) -> None:
    """``render_test`` (``ansi`` returns the string, ``human`` prints it and returns None)."""

    def make(render_mode: str | None = None) -> Any:
        return env(game, players=players, render_mode=render_mode)

    render_test(make)
    printed = capsys.readouterr().out
    assert printed.count("viewer=") >= 5


def test_ansi_render_shows_the_seat_to_act_its_own_hand_only() -> None:
    e = env("pentathlon", players=3, render_mode="ansi")
    e.reset(seed=3)
    match = e.unwrapped.match
    assert match is not None and match.to_act is not None
    text = e.render()
    assert text is not None
    seat = match.to_act
    assert f"viewer={seat};" in text
    assert f"hand={CardSet(match.hands[seat])};" in text
