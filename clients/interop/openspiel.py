"""Every cardarena game as an OpenSpiel Python game (``pip install 'cardarena[openspiel]'``).

>>> import pyspiel
>>> from cardarena.clients.interop import openspiel
>>> openspiel.register()
>>> game = pyspiel.load_game("cardarena_hexathlon", {"players": 3})

Each game is registered as ``cardarena_<name>``; its parameters are those of :mod:`.params`
(``players``, ``options`` as JSON, the top-level scalar options, ``first_dealer``, ``rounds``
for the Norwegian games) plus ``seed`` (64 hex digits, empty by default). Without a seed,
chance is a node per random event and a node per dealt card (see :mod:`.chance`); with one,
each node has the single outcome the fair-deal stream gives, so the match is the one a
server deals from that seed.

* **Actions** are the engine's own action ids (cards ``0..54`` and ``64..111``, ``pass`` 120,
  ``exclude:<suit>`` 124+, ``trump:<suit>`` 128+): ``num_distinct_actions`` is 132 in every
  game, and a state's legal actions are the engine's, sorted. Chance outcomes are card ids
  (a deal), suits ``0..3`` (a trump draw) or seats (a first dealer).
* **Returns** are the engine's totals, exact scores as floats, negated in the games that the
  lowest total wins (pentathlon, hexathlon, heptathlon), so higher is better everywhere; they
  are 0 until the match ends (a terminal reward model, as OpenSpiel's MCTS requires).
  ``min_utility``/``max_utility`` are true bounds for the options (:mod:`.bounds`).
* **Observations** (:mod:`.encoding`) are built from the engine's views only.
* **Resampling**: :meth:`CardState.resample_from_infostate` deals the cards a seat cannot see
  anew, consistently with what it has seen, for OpenSpiel's Python IS-MCTS.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyspiel

from cardarena.engine import (
    GAMES,
    SPECTATOR,
    MatchSetup,
    describe,
    legal_actions_for,
    project_log,
)
from cardarena.engine.actions import MAX_ACTION
from cardarena.engine.cards import MAX_CARD, card_code
from cardarena.engine.determinize import determinize

from .bounds import bounds, signed
from .chance import DEAL, DEALER, TRUMP, ChanceMatch, steps_of
from .encoding import Encoding, InformationStrings, Layout, Tensors, auditor_string
from .params import SEED, ParameterError, defaults, setup_of

PREFIX = "cardarena_"
NUM_ACTIONS = MAX_ACTION + 1
CHANCE_OUTCOMES = MAX_CARD + 1


def short_name(game: str) -> str:
    return PREFIX + game


def game_type(game: str) -> pyspiel.GameType:
    spec = GAMES[game]
    return pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"cardarena {spec.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(spec.players),
        min_num_players=min(spec.players),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={**defaults(game), SEED: ""},
    )


def _seed(text: str) -> bytes | None:
    if not text:
        return None
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise ParameterError("parameter seed must be 64 hex digits (32 bytes), or empty")
    return seed


class CardGame(pyspiel.Game):  # type: ignore[misc]
    """One cardarena game with one set of parameters."""

    def __init__(self, params: dict[str, Any] | None = None, *, game: str) -> None:
        given = dict(params or {})
        self.name = game
        self.seed = _seed(str(given.pop(SEED, "")))
        self.setup: MatchSetup = setup_of(game, given)
        self.layout = Layout(self.setup)
        self.strings = InformationStrings()
        limits = bounds(self.setup)
        low, high = signed((limits.low, limits.high), lowest_wins=GAMES[game].lowest_wins)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=CHANCE_OUTCOMES,
            num_players=self.setup.players,
            min_utility=float(min(low, high)),
            max_utility=float(max(low, high, min(low, high) + 1)),
            utility_sum=None,
            max_game_length=limits.decisions,
        )
        super().__init__(game_type(game), info, params or {})

    def new_initial_state(self) -> CardState:
        return CardState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> CardObserver:
        """A seat's observer (``private_info=SINGLE_PLAYER``, OpenSpiel's default) or the
        public one (``private_info=NONE``: what a spectator sees, the same for every seat);
        with ``perfect_recall`` the information state, else the observation."""
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        private = True
        if iig_obs_type is not None:
            kind = iig_obs_type.private_info
            if not iig_obs_type.public_info or kind == pyspiel.PrivateInfoType.ALL_PLAYERS:
                raise ValueError(
                    "cardarena games observe for one seat (private_info=SINGLE_PLAYER: its hand"
                    " and the table) or for nobody in particular (private_info=NONE: the"
                    " table); public_info must be true"
                )
            private = kind == pyspiel.PrivateInfoType.SINGLE_PLAYER
        return CardObserver(self.layout, recall=recall, private=private, strings=self.strings)

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, Any]]]:
        """Pickled as its name and parameters, loaded again through OpenSpiel's registry (so
        a game can go to another process: multiprocessing, Ray)."""
        return load_game, (self.name, self.get_parameters())


class CardState(pyspiel.State):  # type: ignore[misc]
    """A match in progress; the engine plays it, chance comes from the outside (or the seed)."""

    def __init__(self, game: CardGame) -> None:
        super().__init__(game)
        self.table = ChanceMatch(game.setup, seed=game.seed)
        self.lowest_wins = GAMES[game.name].lowest_wins
        self.tensors = Tensors()
        """This state's tensors and strings, each made once per position (a cache)."""

    def current_player(self) -> int:
        match = self.table.match
        to_act = match.to_act
        if to_act is not None:
            return to_act
        if match.over:
            return int(pyspiel.PlayerId.TERMINAL)
        return int(pyspiel.PlayerId.CHANCE)

    def _legal_actions(self, player: int) -> list[int]:
        match = self.table.match
        return legal_actions_for(match, player) if player == match.to_act else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.table.outcomes()

    def _apply_action(self, action: int) -> None:
        self.table.step(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player != pyspiel.PlayerId.CHANCE:
            return describe(action)
        pending = self.table.match.pending
        if pending == DEALER:
            return f"first dealer: seat {action}"
        if pending == TRUMP:
            return f"trump drawn: {'CDHS'[action]}"
        if pending == DEAL:
            return f"deal {card_name(action)} to seat {self.table.deal_target()}"
        return f"chance {action}"

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> CardState:
        """A state that ``player_id`` cannot tell from this one: the cards it cannot see dealt
        anew, consistently with everything it has seen (the engine's ``determinize``: hand
        sizes, voids, forced passes, earlier rounds, whose turn it is), then played from
        the start.

        OpenSpiel's Python IS-MCTS (``open_spiel.python.algorithms.ismcts``) samples its worlds
        here; ``probability_sampler`` is its ``pyspiel.UniformProbabilitySampler`` (a fresh
        ``random.Random`` without one). Only at a seat's decision, when no deal is pending.
        """
        match = self.table.match
        if match.to_act is None or self.table.is_chance:
            raise ValueError("a state is resampled at a seat's decision, not during a deal")
        sample = random.Random().random if probability_sampler is None else probability_sampler

        def uniform(k: int) -> int:
            return min(int(sample() * k), k - 1)

        world = determinize(
            project_log(match.log, player_id), player_id, uniform, to_act=match.to_act
        )
        other = self.get_game().new_initial_state()
        for step in steps_of(world.log):
            other.apply_action(step)
        assert isinstance(other, CardState)
        return other

    def is_terminal(self) -> bool:
        return self.table.match.over

    def returns(self) -> list[float]:
        match = self.table.match
        if not match.over:
            return [0.0] * match.players
        totals = tuple(float(t) for t in match.totals)
        return signed(totals, lowest_wins=self.lowest_wins)

    def __str__(self) -> str:
        """The whole state, hidden cards included: OpenSpiel's string for people and for
        comparing a state with its copy (the auditor's view, and the deal in progress)."""
        table = self.table
        dealt = " ".join(map(card_name, table.dealt))
        return f"{auditor_string(table.match)}; actions={len(table.history)}; dealing={dealt}"


def card_name(card: int) -> str:
    """A card's code, the Jokers told apart (chance deals each of the three)."""
    return f"{card_code(card)}#{card}" if card_code(card) == "JK" else card_code(card)


class CardObserver:
    """OpenSpiel's observer interface (``tensor``, ``dict``, ``set_from``, ``string_from``).

    ``set_from`` writes the whole ``tensor`` each time (from the state's kept copy), so
    nothing of another seat or state survives in it.
    """

    def __init__(
        self,
        layout: Layout,
        *,
        recall: bool,
        strings: InformationStrings,
        private: bool = True,
    ) -> None:
        self.layout = layout
        self.strings = strings
        self.recall = recall
        self.private = private
        self.encoding: Encoding = layout.encoding(recall=recall, private=private)
        self.tensor = np.zeros(self.encoding.size, np.float32)
        self.dict: dict[str, Any] = {}
        offset = 0
        for name, shape in self.encoding.shapes.items():
            count = int(np.prod(shape))
            self.dict[name] = self.tensor[offset : offset + count].reshape(shape)
            offset += count

    def set_from(self, state: CardState, player: int) -> None:
        self.tensor[:] = state.tensors.tensor(state.table.match, player, self.encoding)

    def string_from(self, state: CardState, player: int) -> str:
        viewer = player if self.private else SPECTATOR
        return state.tensors.string(
            state.table.match, viewer, recall=self.recall, strings=self.strings
        )


def _factory(game: str) -> type[CardGame]:
    """The game's class, named ``CardGame_<game>`` and set as an attribute of this module (so
    that pickle, which finds a class by its module and name, can find it)."""

    def init(self: CardGame, params: dict[str, Any] | None = None) -> None:
        CardGame.__init__(self, params, game=game)

    name = f"CardGame_{game}"
    made = globals().get(name)
    if made is None:
        made = type(name, (CardGame,), {"__init__": init, "__module__": __name__})
        made.__qualname__ = name
        globals()[name] = made
    assert isinstance(made, type) and issubclass(made, CardGame)
    return made


_registered: set[str] = set()


def register() -> list[str]:
    """Register every game with ``pyspiel`` (once; later calls do nothing) and return their
    short names."""
    for game in GAMES:
        if game not in _registered:
            pyspiel.register_game(game_type(game), _factory(game))
            _registered.add(game)
    return [short_name(g) for g in GAMES]


def load_game(game: str, params: dict[str, Any] | None = None) -> CardGame:
    """``pyspiel.load_game("cardarena_<game>", params)``, registering the games first: what an
    unpickled game calls in a process that has not registered them."""
    register()
    loaded = pyspiel.load_game(short_name(game), dict(params or {}))
    assert isinstance(loaded, CardGame)
    return loaded
