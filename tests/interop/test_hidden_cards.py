"""No tensor shows a card its seat cannot see, whatever was asked before (issue 32.1).

A property test over random play of every game and player count, through both interfaces:
OpenSpiel (the state's own tensors, OpenSpiel's observers for a seat and for the public, and
``rl_environment``, which DQN and NFSP learn through) and PettingZoo (``env()`` and
``raw_env()``). At positions along each match every seat's tensors are asked for in a random
order, with another state's asked for in between; each must equal a fresh computation (the
plain one of ``reference.py``: the engine's view and projected log into a new array) and show
no card the seat cannot see. A copy played on must leave the original's tensors as they were,
and a serialised or pickled state must give the same tensors.
"""

from __future__ import annotations

import pickle
import random
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python import rl_environment
from open_spiel.python.observation import make_observation

from cardarena.clients.interop import openspiel
from cardarena.clients.interop.encoding import Encoding, Layout, observation_string
from cardarena.clients.interop.pettingzoo import env, raw_env
from cardarena.engine import Projector

from .games import EVERY_COUNT
from .reference import check_cards, reference_tensor

openspiel.register()

PRIVATE = pyspiel.PrivateInfoType.SINGLE_PLAYER
PUBLIC = pyspiel.PrivateInfoType.NONE
KINDS = ["information", "observation", "seat", "seat_recall", "public", "public_recall"]
"""The state's two tensors, then OpenSpiel's observers: a seat's and the public one, each
without and with perfect recall."""


class Asker:
    """Asks a game's states for tensors the ways algorithms do, sharing OpenSpiel's observers
    (one buffer each) between states and seats, as they are shared in use."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.layout = game.layout
        self.observers = {
            kind: make_observation(
                game,
                pyspiel.IIGObservationType(
                    perfect_recall=kind.endswith("recall"),
                    public_info=True,
                    private_info=PRIVATE if kind.startswith("seat") else PUBLIC,
                ),
            )
            for kind in KINDS[2:]
        }

    def encoding(self, kind: str) -> Encoding:
        recall = kind == "information" or kind.endswith("recall")
        layout: Layout = self.layout
        return layout.encoding(recall=recall, private=not kind.startswith("public"))

    def tensor(self, state: Any, seat: int, kind: str) -> Any:
        if kind == "information":
            return np.asarray(state.information_state_tensor(seat), np.float32)
        if kind == "observation":
            return np.asarray(state.observation_tensor(seat), np.float32)
        observer = self.observers[kind]
        observer.set_from(state, seat)
        return np.array(observer.tensor, np.float32)

    def check(self, state: Any, seat: int, kind: str, got: Any | None = None) -> Any:
        """``seat``'s ``kind`` of tensor from ``state`` equals a fresh one and shows no
        hidden card; returns it."""
        if got is None:
            got = self.tensor(state, seat, kind)
        encoding = self.encoding(kind)
        match = state.table.match
        fresh = reference_tensor(encoding, match, seat)
        assert np.array_equal(got, fresh), (
            f"{kind} tensor of seat {seat} differs from a fresh one at "
            f"{[encoding_piece(encoding, int(k)) for k in np.flatnonzero(got != fresh)][:8]}"
        )
        check_cards(encoding, got, match, seat)
        return got

    def every(self, state: Any, rng: random.Random, other: Any | None = None) -> dict[Any, Any]:
        """Every seat's every tensor, in a random order, ``other``'s asked for in between."""
        n = self.game.num_players()
        asks = [(seat, kind) for seat in range(n) for kind in KINDS]
        rng.shuffle(asks)
        seen = {}
        for seat, kind in asks:
            if other is not None and rng.random() < 0.5:
                self.tensor(other, rng.randrange(n), rng.choice(KINDS))
            seen[seat, kind] = self.check(state, seat, kind)
        for seat in range(n):
            match = state.table.match
            assert state.observation_string(seat) == observation_string(match, seat)
            projector = Projector(seat)
            log = "\n".join(repr(projector.project(e)) for e in match.log)
            assert state.information_state_string(seat) == log
        return seen


def encoding_piece(encoding: Encoding, index: int) -> str:
    for name, size in encoding.pieces:
        start = encoding.offset[name]
        if start <= index < start + size:
            return f"{name}[{index - start}]"
    return str(index)


def _step(state: Any, rng: random.Random) -> None:
    if state.is_chance_node():
        outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(rng.choices(outcomes, probabilities)[0])
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def _ahead(state: Any, rng: random.Random, steps: int) -> Any:
    copy = state.clone()
    for _ in range(steps):
        if copy.is_terminal():
            break
        _step(copy, rng)
    return copy


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_openspiel_tensors_are_fresh_and_hide_other_hands(game: str, players: int) -> None:
    pygame = pyspiel.load_game(openspiel.short_name(game), {"players": players})
    asker = Asker(pygame)
    rng = random.Random(f"{game}/{players}")
    state = pygame.new_initial_state()
    other = _ahead(state, rng, 0)
    checks = copies = serialised = 0
    while not state.is_terminal():
        if rng.random() < 0.06:
            if rng.random() < 0.3:
                other = _ahead(state, rng, rng.randrange(1, 60))
            seen = asker.every(state, rng, other)
            checks += 1
            if rng.random() < 0.4:  # a copy played on, asked for tensors on the way
                copy = state.clone()
                for _ in range(rng.randrange(1, 40)):
                    if copy.is_terminal():
                        break
                    _step(copy, rng)
                    asker.tensor(copy, rng.randrange(players), rng.choice(KINDS))
                for (seat, kind), before in seen.items():
                    assert np.array_equal(asker.check(state, seat, kind), before)
                copies += 1
            if rng.random() < 0.4:  # serialised, and pickled
                again = pygame.deserialize_state(state.serialize())
                pickled = pickle.loads(pickle.dumps(state))
                for (seat, kind), before in seen.items():
                    assert np.array_equal(asker.tensor(again, seat, kind), before)
                    assert np.array_equal(asker.tensor(pickled, seat, kind), before)
                serialised += 1
        _step(state, rng)
    asker.every(state, rng, other)
    assert checks >= 5 and copies >= 1 and serialised >= 1, (checks, copies, serialised)


@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_rl_environment_information_states_are_fresh_and_hide_other_hands(
    game: str, players: int
) -> None:
    """OpenSpiel's ``rl_environment`` (what its DQN and NFSP learn through) asks every seat's
    information state after every step; on the unfixed observer, seat 0's ``dealt`` held 42
    cards there."""
    pygame = pyspiel.load_game(openspiel.short_name(game), {"players": players})
    asker = Asker(pygame)
    environment = rl_environment.Environment(pygame, seed=players)
    rng = random.Random(players)
    step = environment.reset()
    steps = 0
    while not step.last():
        if rng.random() < 0.3:
            state = environment.get_state
            for seat in range(players):
                got = np.asarray(step.observations["info_state"][seat], np.float32)
                asker.check(state, seat, "information", got)
        legal = step.observations["legal_actions"][step.observations["current_player"]]
        step = environment.step([rng.choice(legal)])
        steps += 1
    assert steps > 40


@pytest.mark.parametrize("wrapped", [True, False], ids=["env", "raw_env"])
@pytest.mark.parametrize(("game", "players"), EVERY_COUNT)
def test_pettingzoo_observations_are_fresh_and_hide_other_hands(
    game: str, players: int, wrapped: bool
) -> None:
    """Every agent observed in a random order at every turn (not only the one to act), each
    observation a fresh computation showing no hidden card; an observation is the caller's
    own array; ``info`` carries no deal seed or any other hidden state."""
    e = (env if wrapped else raw_env)(game, players=players)
    e.reset(seed=players)
    bare = e.unwrapped
    encoding = bare.layout.encoding(recall=True)
    rng = random.Random(f"{game}/{players}/{wrapped}")
    turns = checked = 0
    for _ in e.agent_iter():
        match = bare.match
        order = list(e.possible_agents) if rng.random() < 0.3 else []
        rng.shuffle(order)
        for name in order:
            seat = e.possible_agents.index(name)
            observation = e.observe(name)["observation"]
            assert np.array_equal(observation, reference_tensor(encoding, match, seat))
            check_cards(encoding, observation, match, seat)
            observation[:] = 7.0  # the caller's to change: nothing kept is touched
            checked += 1
        observation, _, termination, truncation, info = e.last()
        assert info == {}
        if termination or truncation:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        turns += 1
    assert turns > 40 and checked > 10
