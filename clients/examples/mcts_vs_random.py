"""OpenSpiel's MCTS (or IS-MCTS) bot against uniformly random bots on a cardarena game.

    .venv/bin/python clients/examples/mcts_vs_random.py --matches 10 --simulations 50
    .venv/bin/python clients/examples/mcts_vs_random.py --bot ismcts --matches 10

The game is a one-round Pentathlon (the ``pass`` round: fewest tricks wins) for three players,
loaded through OpenSpiel's own registry like any of its games. One seat is OpenSpiel's search
bot with random rollouts; the others play uniformly random legal cards; the seats rotate so
that the searcher plays every seat. Returns are OpenSpiel's (negated totals: higher is better).

* ``mcts``: OpenSpiel's MCTS searches the true state, so it plays with every hand in view: it
  measures the interface and the search, not a fair player.
* ``ismcts``: OpenSpiel's information-set MCTS searches worlds sampled from what its seat has
  seen (``CardState.resample_from_infostate``, the engine's determinization): a fair player.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.bots import uniform_random

from cardarena.clients.interop import openspiel


def searcher(kind: str, game: Any, simulations: int, rng: np.random.RandomState) -> Any:
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    if kind == "mcts":
        return mcts.MCTSBot(game, 2.0, simulations, evaluator, random_state=rng)
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, simulations, random_state=rng)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rng.uniform))
    return bot


def play(matches: int, simulations: int, seed: int, kind: str = "mcts") -> tuple[float, float]:
    """Mean return of the searcher and of the random seats over ``matches`` matches."""
    openspiel.register()
    game = pyspiel.load_game("cardarena_pentathlon", {"players": 3, "rounds": "pass"})
    rng = np.random.RandomState(seed)
    mcts_total = random_total = 0.0
    for number in range(matches):
        seat = number % game.num_players()
        bots = [
            searcher(kind, game, simulations, rng)
            if s == seat
            else uniform_random.UniformRandomBot(s, rng)
            for s in range(game.num_players())
        ]
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probabilities)))
            else:
                state.apply_action(bots[state.current_player()].step(state))
        returns = state.returns()
        mcts_total += returns[seat]
        random_total += (sum(returns) - returns[seat]) / (game.num_players() - 1)
    return mcts_total / matches, random_total / matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bot", choices=["mcts", "ismcts"], default="mcts")
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--simulations", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    mean, random_mean = play(args.matches, args.simulations, args.seed, args.bot)
    print(f"{args.matches} matches, {args.bot} with {args.simulations} simulations a move")
    print(f"mean return  {args.bot}: {mean:+.2f}  random: {random_mean:+.2f}")


if __name__ == "__main__":
    main()
