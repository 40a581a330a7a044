"""Every cardarena game as a PettingZoo AEC environment (``pip install 'cardarena[pettingzoo]'``).

>>> from cardarena.clients.interop.pettingzoo import env
>>> e = env("hexathlon", players=4)
>>> e.reset(seed=7)
>>> for agent in e.agent_iter():
...     observation, reward, termination, truncation, info = e.last()
...     mask = observation["action_mask"]
...     e.step(None if termination or truncation else int(mask.nonzero()[0][0]))

* **Agents** are ``seat_0 … seat_{n-1}``; ``agent_selection`` is the seat the engine asks.
* **Actions** are the engine's action ids (``Discrete(132)``, as in :mod:`.openspiel`);
  ``observation["action_mask"]`` marks the legal ones for the seat to act (zeros otherwise).
* **Observations** ``observation["observation"]`` are the information-state tensor of
  :mod:`.encoding` (the seat's view and its memory of the round), built from the engine's
  views only: another seat's hidden cards never reach it.
* **Deals** come from the engine's fair-deal stream, seeded from ``reset(seed=…)``: the 32-byte
  seed is drawn from the environment's seeded generator, so a seed gives the same deals every
  time (``info["seed"]`` holds it in hex: a server would deal that match from it).
* **Rewards** are the round scores as they are scored (the last action of a round), signed as
  in :mod:`.openspiel` (negated where the lowest total wins), so an agent's rewards add up to
  its signed final total.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from cardarena.engine import GAMES, Match, MatchSetup
from cardarena.engine.actions import MAX_ACTION

from .bounds import signed
from .encoding import Layout, observation_string
from .params import setup_of

NUM_ACTIONS = MAX_ACTION + 1


class CardArenaEnv(AECEnv):  # type: ignore[misc]
    """One game, one player count, one set of options; a new match at every ``reset``."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
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
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        given: dict[str, Any] = {} if options is None else {"options": dict(options)}
        if players is not None:
            given["players"] = players
        self.setup: MatchSetup = setup_of(game, given)
        self.render_mode = render_mode
        self.lowest_wins = GAMES[game].lowest_wins
        self.layout = Layout(self.setup)
        n = self.setup.players
        self.possible_agents = [f"seat_{s}" for s in range(n)]
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
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"seed": deal_seed.hex()} for a in self.agents}
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
        seat = self.possible_agents.index(agent)
        observation = np.zeros(self.layout.information_size, np.float32)
        self.layout.information(match, seat, observation)
        mask = np.zeros(NUM_ACTIONS, np.int8)
        if match.to_act == seat:
            mask[match.legal_actions()] = 1
        return {"observation": observation, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        assert match is not None and action is not None
        seat = self.possible_agents.index(agent)
        before = signed(tuple(map(float, match.totals)), lowest_wins=self.lowest_wins)
        match.apply(seat, int(action))
        after = signed(tuple(map(float, match.totals)), lowest_wins=self.lowest_wins)
        self._cumulative_rewards[agent] = 0.0
        for s, name in enumerate(self.possible_agents):
            self.rewards[name] = after[s] - before[s]
        if match.over:
            for name in self.agents:
                self.terminations[name] = True
        self._select()
        self._accumulate_rewards()

    def render(self) -> str | None:
        """``ansi``: the observation string of the seat to act (no other seat's cards)."""
        if self.render_mode is None or self.match is None:
            return None
        seat = self.match.to_act if self.match.to_act is not None else 0
        return observation_string(self.match, seat)

    def close(self) -> None:
        pass


def env(game: str = "hexathlon", **kwargs: Any) -> CardArenaEnv:
    """The environment (PettingZoo's usual entry point)."""
    return CardArenaEnv(game, **kwargs)
