"""Every cardarena game as a PettingZoo AEC environment (``pip install 'cardarena[pettingzoo]'``).

>>> from cardarena.clients.interop.pettingzoo import env
>>> e = env("hexathlon", players=4)
>>> e.reset(seed=7)
>>> for agent in e.agent_iter():
...     observation, reward, termination, truncation, info = e.last()
...     mask = observation["action_mask"]
...     e.step(None if termination or truncation else int(mask.nonzero()[0][0]))

* :func:`env` is the environment with PettingZoo's standard wrappers, as its classic games
  are: stepping or observing before ``reset`` is an error that says so, an action outside the
  space is refused, and an illegal action ends the match with that agent's reward the worst
  total the game allows (``illegal_reward``). :func:`raw_env` is the bare environment.
* **Agents** are ``seat_0 … seat_{n-1}``; ``agent_selection`` is the seat the engine asks.
* **Actions** are the engine's action ids (``Discrete(132)``, as in :mod:`.openspiel`);
  ``observation["action_mask"]`` marks the legal ones for the seat to act (zeros otherwise).
* **Observations** ``observation["observation"]`` are the information-state tensor of
  :mod:`.encoding` (the seat's view and its memory of the round), built from the engine's
  views only: another seat's hidden cards never reach it.
* **Deals** come from the engine's fair-deal stream, seeded from ``reset(seed=…)``: the 32-byte
  seed is drawn from the environment's seeded generator, so a seed gives the same deals every
  time. The deal seed decides every hand, so it is never in ``info``; ``reveal_deal_seed=True``
  (a debugging mode, never for agents being trained or evaluated) puts it in every agent's
  ``info["deal_seed"]`` (hex: a server would deal that match from it).
* **Rewards** are the round scores as they are scored (the last action of a round), signed as
  in :mod:`.openspiel` (negated where the lowest total wins), so an agent's rewards add up to
  its signed final total.
* ``render_mode="ansi"``: ``render()`` returns the observation string of the seat to act (its
  hand and the table, no other seat's cards); ``"human"`` prints it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from cardarena.engine import GAMES, Match, MatchSetup
from cardarena.engine.actions import MAX_ACTION
from cardarena.engine.cards import JOKER_MASK
from cardarena.engine.jokers import renamed_mask
from cardarena.engine.views import view_names

from .bounds import bounds, signed
from .encoding import Layout, RoundMemory, observation_string
from .params import setup_of

NUM_ACTIONS = MAX_ACTION + 1
MASKS_KEPT = 4096


class CardArenaEnv(AECEnv):  # type: ignore[misc]
    """One game, one player count, one set of options; a new match at every ``reset``."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "cardarena_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game: str = "hexathlon",
        *,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        render_mode: str | None = None,
        reveal_deal_seed: bool = False,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        given: dict[str, Any] = {} if options is None else {"options": dict(options)}
        if players is not None:
            given["players"] = players
        self.setup: MatchSetup = setup_of(game, given)
        self.render_mode = render_mode
        self.reveal_deal_seed = reveal_deal_seed
        self.lowest_wins = GAMES[game].lowest_wins
        limits = bounds(self.setup)
        self.worst_total = min(signed((limits.low, limits.high), lowest_wins=self.lowest_wins))
        """The worst signed total a seat can end with (the default reward for an illegal
        action under :func:`env`'s wrappers)."""
        self.layout = Layout(self.setup)
        self._encoding = self.layout.encoding(recall=True)
        self._memory = RoundMemory()
        """The round's memory, followed along the match (every observation is made anew: a
        turn observes once, so keeping observations would cost more than it saves)."""
        n = self.setup.players
        self.possible_agents = [f"seat_{s}" for s in range(n)]
        self._seats = {a: s for s, a in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        size = self.layout.information_size
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(-1.0, float(2 * n), (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.match: Match | None = None
        self._no_mask = np.zeros(NUM_ACTIONS, np.int8)
        self._masks: dict[int, np.ndarray[Any, np.dtype[np.int8]]] = {}
        """Action masks by the engine's legal-action bitmask (the same few recur)."""
        self.np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self.match is None:
            self.np_random, _ = seeding.np_random(seed)
        deal_seed = self.np_random.bytes(32)
        self.match = self.setup.start(deal_seed)
        self._memory = RoundMemory()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        debug = {"deal_seed": deal_seed.hex()} if self.reveal_deal_seed else {}
        self.infos: dict[str, dict[str, Any]] = {a: dict(debug) for a in self.agents}
        self._select()

    def _select(self) -> None:
        match = self.match
        assert match is not None
        if match.to_act is not None:
            self.agent_selection = self.possible_agents[match.to_act]
        elif self.agents:
            self.agent_selection = self.agents[0]

    def observe(self, agent: str) -> dict[str, Any]:
        match = self.match
        assert match is not None
        seat = self._seats[agent]
        observation = self._encoding.encode(match, seat, self._memory)
        if match.to_act != seat:
            return {"observation": observation, "action_mask": self._no_mask.copy()}
        legal = match.legal_mask()
        if legal & JOKER_MASK:  # under the seat's own numbers, as its observation shows them
            legal = renamed_mask(legal, view_names(match, seat))
        mask = self._masks.get(legal)
        if mask is None:
            if len(self._masks) >= MASKS_KEPT:
                self._masks.clear()
            mask = self._masks[legal] = np.zeros(NUM_ACTIONS, np.int8)
            mask[[a for a in range(legal.bit_length()) if legal >> a & 1]] = 1
        return {"observation": observation, "action_mask": mask.copy()}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        assert match is not None and action is not None
        totals = match.totals
        match.apply(self._seats[agent], int(action))
        self._cumulative_rewards[agent] = 0.0
        if match.totals is totals:  # no round was scored: nobody's total moved
            if any(self.rewards.values()):
                self.rewards = dict.fromkeys(self.agents, 0.0)
        else:
            before = signed(tuple(map(float, totals)), lowest_wins=self.lowest_wins)
            after = signed(tuple(map(float, match.totals)), lowest_wins=self.lowest_wins)
            self.rewards = {a: after[s] - before[s] for s, a in enumerate(self.possible_agents)}
            self._accumulate_rewards()
        if match.over:
            for name in self.agents:
                self.terminations[name] = True
        self._select()

    def render(self) -> str | None:
        """``ansi``: the observation string of the seat to act (no other seat's cards);
        ``human``: the same, printed."""
        if self.render_mode is None or self.match is None:
            return None
        match = self.match
        seat = match.to_act if match.to_act is not None else 0
        text = observation_string(match, seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def raw_env(game: str = "hexathlon", **kwargs: Any) -> CardArenaEnv:
    """The bare environment, without PettingZoo's wrappers (``kwargs`` as
    :class:`CardArenaEnv` takes them)."""
    return CardArenaEnv(game, **kwargs)


def env(game: str = "hexathlon", *, illegal_reward: float | None = None, **kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard wrappers, as its classic games have them
    (PettingZoo's usual entry point): ``TerminateIllegalWrapper`` (an illegal action ends the
    match; its agent's reward is ``illegal_reward``, by default the worst total the game
    allows), ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` (nothing before
    ``reset``). ``env(...).unwrapped`` is the :class:`CardArenaEnv`."""
    bare = raw_env(game, **kwargs)
    worst = bare.worst_total if illegal_reward is None else illegal_reward
    wrapped: AECEnv = wrappers.TerminateIllegalWrapper(bare, illegal_reward=worst)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
