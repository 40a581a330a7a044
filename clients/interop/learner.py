"""A small masked learner trained against the reference bots: docs/research.md's worked example.

    .venv/bin/python -m cardarena.clients.interop.learner --game hexathlon --episodes 1000

One seat of a PettingZoo environment (:func:`.pettingzoo.raw_env`) is the learner; the other
seats are reference bots (``rules`` by default, or ``random``), each reading its own
:class:`~cardarena.clients.bots.state.SeatState` folded from the log as ``Projector`` shows it
to that seat, as in a hosted match. The seat rotates from match to match and the deals come
from ``reset(seed=…)``.

* **Policy**: a softmax over the legal actions only (the observation's ``action_mask``) of
  ``θ[kind] · φ(action)``: a few features of each legal action read from the observation's
  pieces by name (:class:`Features`: the card's rank, whether it follows the led suit, whether
  it would win the trick so far, whether it is trump, how long its suit is in hand …), one
  weight vector per round kind (a pass round and a grand pay for opposite things).
* **Training**: REINFORCE. Each decision is credited with the score of its round (the rewards
  the environment pays at a round's end), less a running mean for the round kind, and the
  weights move by Adam after every match.
* **Evaluation**: on deals kept apart from training, the learner playing its most likely
  action beside the untrained learner (all weights 0: it plays its first legal action, the
  lowest card id), a uniformly random player and the rules bot, each in the same seat against
  the same opponents on the same deals (duplicate: the differences cancel the luck of the
  cards), with 95% confidence intervals.

It is deliberately small (a dozen weights a round kind, numpy only) so that it trains in
minutes on a laptop and a test can run it in seconds; the observation it reads is the one any
learner gets.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cardarena.clients.bots import RandomBot, RuleBot
from cardarena.clients.bots.state import SeatState
from cardarena.engine import GAMES, Projector, legal_actions_for
from cardarena.engine.actions import PASS

from .encoding import Layout
from .pettingzoo import CardArenaEnv, raw_env

Floats = npt.NDArray[np.float64]

FEATURES = (
    "bias",
    "rank",
    "follows",
    "wins",
    "wins_high",
    "leads_high",
    "trump",
    "clubs",
    "queen",
    "suit_length",
    "not_a_card",
    "wins_last",
)
"""What :class:`Features` tells of each legal action (ranks scaled to 0..1)."""
TRAIN_SEED = 10_000
EVALUATION_SEED = 1_000_000
"""Training deals are ``reset(seed=TRAIN_SEED + k)``; evaluation deals start far apart."""


class Features:
    """Each legal action's features, from the information-state tensor's pieces by name."""

    def __init__(self, layout: Layout) -> None:
        encoding = layout.encoding(recall=True)
        self.at = encoding.offset
        self.players, self.cards, self.base = layout.players, layout.cards, layout.base
        self.kinds = len(layout.kinds)
        self.spanish = layout.base > 0

    def suit_rank(self, card: int) -> tuple[int, float]:
        """A card's suit (4 for a Joker) and its rank scaled to 0..1."""
        if self.spanish:
            return (card - 64) // 12, ((card - 64) % 12) / 11
        if card >= 52:
            return 4, 1.0
        return card // 13, (card % 13) / 12

    def __call__(self, x: Any, legal: Sequence[int]) -> tuple[int, Floats]:
        """The round kind's index and a row of :data:`FEATURES` per legal action."""
        at, n, c, base = self.at, self.players, self.cards, self.base
        kinds = x[at["kind"] : at["kind"] + self.kinds]
        kind = int(np.argmax(kinds)) if kinds.any() else 0
        trump = int(np.argmax(x[at["trump"] : at["trump"] + 5]))
        rows = x[at["trick"] : at["trick"] + n * c].reshape(n, c)
        trick = [int(np.argmax(row)) + base for row in rows if row.any()]
        led = self.suit_rank(trick[0])[0] if trick else None
        best: tuple[bool, float] | None = None  # the trick's winner so far: (trump?, rank)
        for card in trick:
            suit, rank = self.suit_rank(card)
            if suit in (led, trump) and (best is None or (suit == trump, rank) > best):
                best = (suit == trump, rank)
        length = [0] * 5
        for index in np.flatnonzero(x[at["hand"] : at["hand"] + c]).tolist():
            length[self.suit_rank(index + base)[0]] += 1
        phi = np.zeros((len(legal), len(FEATURES)))
        for j, action in enumerate(legal):
            phi[j, 0] = 1.0
            if action >= PASS:
                phi[j, 10] = 1.0
                continue
            suit, rank = self.suit_rank(action)
            key = (suit == trump, rank) if led is None or suit in (led, trump) else None
            wins = key is not None and (best is None or key > best)
            phi[j, 1] = rank
            phi[j, 2] = led is not None and suit == led
            phi[j, 3] = wins
            phi[j, 4] = wins * rank
            phi[j, 5] = (led is None) * rank
            phi[j, 6] = suit == trump
            phi[j, 7] = suit == 0 and not self.spanish
            phi[j, 8] = not self.spanish and action < 52 and action % 13 == 10
            phi[j, 9] = length[suit] / 13
            phi[j, 11] = wins and len(trick) == n - 1
        return kind, phi


@dataclass
class Decision:
    kind: int
    phi: Floats
    chosen: int
    probabilities: Floats
    round: int


class Learner:
    """The policy, its weights (a row of :data:`FEATURES` per round kind) and Adam's state."""

    def __init__(self, features: Features, learning_rate: float = 0.05) -> None:
        self.features = features
        self.theta = np.zeros((features.kinds, len(FEATURES)))
        self.learning_rate = learning_rate
        self._m = np.zeros_like(self.theta)
        self._v = np.zeros_like(self.theta)
        self._t = 0
        self.baseline = np.zeros(features.kinds)
        self._counted = np.zeros(features.kinds)

    def act(
        self, x: Any, legal: Sequence[int], rng: np.random.Generator, *, greedy: bool
    ) -> tuple[int, Decision]:
        kind, phi = self.features(x, legal)
        logits = phi @ self.theta[kind]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        j = int(np.argmax(p)) if greedy else int(rng.choice(len(p), p=p))
        return legal[j], Decision(kind, phi, j, p, -1)

    def learn(self, decisions: Sequence[tuple[Decision, float]]) -> None:
        """One REINFORCE step: each decision with the signed score of its round."""
        if not decisions:
            return
        gradient = np.zeros_like(self.theta)
        for d, score in decisions:
            advantage = score - self.baseline[d.kind]
            gradient[d.kind] += advantage * (d.phi[d.chosen] - d.probabilities @ d.phi)
        for d, score in decisions:
            self._counted[d.kind] += 1
            self.baseline[d.kind] += (score - self.baseline[d.kind]) / min(
                self._counted[d.kind], 200
            )
        gradient /= len(decisions)
        self._t += 1
        self._m = 0.9 * self._m + 0.1 * gradient
        self._v = 0.999 * self._v + 0.001 * gradient * gradient
        m = self._m / (1 - 0.9**self._t)
        v = self._v / (1 - 0.999**self._t)
        self.theta += self.learning_rate * m / (np.sqrt(v) + 1e-8)


Player = Learner | str
"""The learner, or ``"random"`` or ``"rules"`` in its seat (the evaluation's yardsticks)."""


def bots_of(opponents: str) -> Callable[[int], Any]:
    if opponents == "rules":
        return lambda seat: RuleBot()
    return RandomBot


def play(
    env: CardArenaEnv,
    seed: int,
    seat: int,
    player: Player,
    opponents: str,
    rng: np.random.Generator,
    *,
    greedy: bool = False,
) -> tuple[float, list[tuple[Decision, float]]]:
    """One match from ``reset(seed=seed)``: ``player`` in ``seat``, reference bots elsewhere.
    Returns the seat's signed total and the learner's decisions with their rounds' scores."""
    env.reset(seed=seed)
    match = env.match
    assert match is not None
    n = match.players
    make = bots_of(opponents)
    seats = [s for s in range(n) if s != seat or player == "rules"]
    bots = {s: make(s) if s != seat else RuleBot() for s in seats}
    states = {s: SeatState("learner", s) for s in seats}
    projectors = {s: Projector(s) for s in seats}
    decisions: list[Decision] = []
    fed = 0
    while not match.over:
        for event in match.log[fed:]:
            for s, state in states.items():
                state.observe(projectors[s].project(event))
        fed = len(match.log)
        to_act = match.to_act
        assert to_act is not None
        if to_act == seat and isinstance(player, Learner):
            observation = env.observe(env.possible_agents[seat])
            legal = np.flatnonzero(observation["action_mask"]).tolist()
            action, decision = player.act(observation["observation"], legal, rng, greedy=greedy)
            decision.round = match.round_index
            decisions.append(decision)
        elif to_act == seat and player == "random":
            action = int(rng.choice(match.legal_actions()))
        else:
            state = states[to_act]
            state.note_turn(to_act, 0)
            state.legal = legal_actions_for(match, to_act)
            action = bots[to_act].choose(state)
            state.legal = []
        env.step(action)
    sign = -1.0 if env.lowest_wins else 1.0
    scores = match.round_scores
    credited = [(d, sign * float(scores[d.round][seat])) for d in decisions]
    return sign * float(match.totals[seat]), credited


def train(
    env: CardArenaEnv,
    learner: Learner,
    episodes: int,
    opponents: str,
    seed: int,
    report: Callable[[int], None] | None = None,
) -> None:
    rng = np.random.default_rng(seed)
    n = env.setup.players
    for k in range(episodes):
        _, decisions = play(env, TRAIN_SEED + k, k % n, learner, opponents, rng)
        learner.learn(decisions)
        if report is not None:
            report(k + 1)


@dataclass(frozen=True)
class Result:
    mean: float
    half_width: float
    """Half the 95% confidence interval (normal approximation)."""


def interval(values: Sequence[float]) -> Result:
    a = np.asarray(values, dtype=float)
    spread = float(a.std(ddof=1)) if len(a) > 1 else 0.0
    return Result(float(a.mean()), 1.96 * spread / math.sqrt(len(a)))


def evaluate(
    env: CardArenaEnv, players: dict[str, Player], deals: int, opponents: str
) -> dict[str, list[float]]:
    """Each player's signed totals in the same seat on the same ``deals`` held-out deals."""
    n = env.setup.players
    out: dict[str, list[float]] = {name: [] for name in players}
    for k in range(deals):
        for name, player in players.items():
            rng = np.random.default_rng(k)
            total, _ = play(env, EVALUATION_SEED + k, k % n, player, opponents, rng, greedy=True)
            out[name].append(total)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cardarena.clients.interop.learner",
        description="Train a small masked learner against the reference bots and evaluate it.",
    )
    parser.add_argument("--game", choices=list(GAMES), default="hexathlon")
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--rounds", default="", help="Norwegian games: e.g. pass+grand")
    parser.add_argument("--episodes", type=int, default=1000, help="training matches")
    parser.add_argument("--deals", type=int, default=500, help="held-out evaluation deals")
    parser.add_argument("--opponents", choices=["rules", "random"], default="rules")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    options = {"rounds": args.rounds.split("+")} if args.rounds else None
    env = raw_env(args.game, players=args.players, options=options)
    learner = Learner(Features(env.layout), args.learning_rate)
    n = env.setup.players
    print(
        f"{args.game}, {n} players{', rounds ' + args.rounds if args.rounds else ''}: the learner"
        f" in one seat (rotating), {args.opponents} bots in the others",
        flush=True,
    )
    start = time.process_time()
    step = max(args.episodes // 5, 1)

    def progress(done: int) -> None:
        if done % step == 0 or done == args.episodes:
            print(f"  trained {done} matches, {time.process_time() - start:.0f} s", flush=True)

    train(env, learner, args.episodes, args.opponents, args.seed, progress)
    trained = time.process_time() - start
    untrained = Learner(Features(env.layout))  # all weights 0: its first legal action
    players: dict[str, Player] = {
        "learner": learner,
        "untrained": untrained,
        "random": "random",
        "rules": "rules",
    }
    totals = evaluate(env, players, args.deals, args.opponents)
    better = "lower" if env.lowest_wins else "higher"
    print(
        f"\n{args.deals} held-out deals, the same for each player in the same seat "
        f"(signed totals: higher is better; the game's {better} total wins)"
    )
    for name, values in totals.items():
        r = interval(values)
        print(f"  {name:<19} {r.mean:8.2f} ± {r.half_width:.2f}")
    for other in ("untrained", "random", "rules"):
        gap = interval([a - b for a, b in zip(totals["learner"], totals[other], strict=True)])
        print(f"  learner − {other:<9} {gap.mean:+8.2f} ± {gap.half_width:.2f} (paired)")
    print(f"training: {args.episodes} matches, {trained:.0f} s of CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
