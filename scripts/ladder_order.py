"""How safe a ladder's order of the reference bots is after a number of matches: run on
purpose, never as a test.

Why: issue 31's done criterion asks that a ladder of six entrants (the random, rules and
Monte Carlo reference bots, two external bots and one more) order the reference bots by
strength after a bounded time, and a test may assert only what holds nearly always. This
plays whole ladders in process, with the ladder's own scheduling rule
(``competition.ladder.next_lineup``) and board (``competition.ladder.Board``), the two
external bots stood in for by a first-legal bot (what ``clients/examples/first_legal_bot.js``
plays), and says in how many of them the board put mc above rules above random.

    .venv/bin/python scripts/ladder_order.py --game crazy_sixes --players 4 --groups 20 \\
        --ladders 20

(tests/integration/test_ladder_strength.py and docs/ladders.md give the figures.)
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable

from cardarena.clients.bots import Bot, MonteCarloBot, RandomBot, RuleBot, SeatState, play_local
from cardarena.competition import Candidate, Played, next_lineup, rotations
from cardarena.competition.ladder import Board
from cardarena.engine import GAMES


class FirstLegal:
    """The first legal action: the example external bot's play."""

    name = "first"

    def choose(self, state: SeatState) -> int:
        return state.legal[0]


def players(budget_ms: float, samples: int) -> dict[str, Callable[[int], Bot]]:
    return {
        "random": RandomBot,
        "rules": lambda seed: RuleBot(),
        "mc": lambda seed: MonteCarloBot(seed=seed, budget_ms=budget_ms, samples=samples),
        "ext-a": lambda seed: FirstLegal(),
        "ext-b": lambda seed: FirstLegal(),
        "v": RandomBot,
    }


def ladder(args: argparse.Namespace, seed: int) -> tuple[bool, Board]:
    """One ladder of ``args.groups`` duplicate groups: whether its board ranks mc above
    rules above random."""
    make = players(args.mc_budget_ms, args.mc_samples)
    board = Board(lowest_wins=GAMES[args.game].lowest_wins, group_size=args.players)
    scheduled: Counter[str] = Counter()
    met: Counter[frozenset[str]] = Counter()
    rng = random.Random(seed)
    index = 0
    for group in range(args.groups):
        candidates = []
        for name in make:
            rating = board.rating(name)
            candidates.append(Candidate(name, scheduled[name], rating.ordinal if rating else 0.0))
        lineup = next_lineup(candidates, met, args.players)
        assert lineup is not None
        for name in lineup:
            scheduled[name] += args.players
        for a in range(len(lineup)):
            for b in range(a + 1, len(lineup)):
                met[frozenset((lineup[a], lineup[b]))] += 1
        deal = rng.randbytes(32)
        for seats in rotations(lineup):
            bots = [make[name](rng.randrange(1 << 30)) for name in seats]
            match, _ = play_local(args.game, bots, deal)
            board.add(
                Played(
                    index=index,
                    group=group,
                    entrants=tuple(seats),
                    totals=tuple(match.totals),
                    winners=tuple(match.winners),
                )
            )
            index += 1
    order = [row.player for row in board.ranked()]
    return order.index("mc") < order.index("rules") < order.index("random"), board


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="crazy_sixes")
    parser.add_argument("--players", type=int, default=4, help="seats per match")
    parser.add_argument("--groups", type=int, default=20, help="duplicate groups per ladder")
    parser.add_argument("--ladders", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="the first ladder's seed")
    parser.add_argument("--mc-budget-ms", type=float, default=5.0)
    parser.add_argument("--mc-samples", type=int, default=50)
    args = parser.parse_args()
    right = 0
    for seed in range(args.seed, args.seed + args.ladders):
        started = time.perf_counter()
        ordered, board = ladder(args, seed)
        right += ordered
        shown = []
        for row in board.ranked():
            rating = board.rating(row.player)
            assert rating is not None
            shown.append(f"{row.player} {rating.mu:.1f}±{rating.sigma:.1f}")
        print(
            f"ladder {seed}: {board.counted} matches in {time.perf_counter() - started:.1f} s,"
            f" {'ordered' if ordered else 'NOT ordered'}: {', '.join(shown)}",
            flush=True,
        )
    print(
        f"{args.game}, {args.players} seats, {args.groups * args.players} matches a ladder:"
        f" mc > rules > random on {right} boards of {args.ladders}"
    )


if __name__ == "__main__":
    main()
