"""Duplicate evaluation of the reference bots: run on purpose, never as a test.

Why duplicate: card luck swamps skill in a few hundred matches. Here every seed is played
once per seating of the two bots being compared, each seating a rotation of the same
lineup, so every seat's cards are played as often by one bot as by the other. One seed's
matches form a *duplicate group*; the confidence intervals are over groups (95%, normal
approximation), so the luck of the deal cancels inside each group.

Seatings: with an even number of players the lineup alternates ``A B A B``, and its two
distinct rotations make a group; with an odd number the lineups ``A A B`` and ``B B A``
(generally: one bot takes the extra seat, then the other) give ``2n`` rotations.

Scores are match totals per seat, so "better" is lower in the Norwegian games and higher
in Crazy Sixes and Triathlon. A win is shared among joint winners (a two-way tie is half
a win each), so the win rates of one match add up to one.

    .venv/bin/python scripts/eval_bots.py --matches 1000 --pairs random:rules,rules:mc \\
        --mc-budget-ms 5 --jobs 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cardarena.clients.bots import Bot, MonteCarloBot, RandomBot, RuleBot, play_local
from cardarena.engine import GAMES

DEFAULT_GAMES = ("pentathlon", "hexathlon", "heptathlon", "crazy_sixes", "triathlon")


@dataclass(frozen=True)
class Job:
    game: str
    players: int
    first: str
    second: str
    group: int
    mc_budget_ms: float


@dataclass
class GroupResult:
    """One duplicate group: every seat-instance's total and win share, by bot."""

    scores: dict[str, list[float]] = field(default_factory=dict)
    wins: dict[str, list[float]] = field(default_factory=dict)
    matches: int = 0
    mc_samples: int = 0
    mc_searches: int = 0


def lineups(first: str, second: str, players: int) -> list[list[str]]:
    """Every seating of one duplicate group (see the module docstring)."""
    if players % 2 == 0:
        base = [[first if i % 2 == 0 else second for i in range(players)]]
    else:
        extra = players // 2 + 1
        base = [
            [first] * extra + [second] * (players - extra),
            [second] * extra + [first] * (players - extra),
        ]
    out: list[list[str]] = []
    for lineup in base:
        for shift in range(players):
            rotated = lineup[shift:] + lineup[:shift]
            if rotated not in out:
                out.append(rotated)
    return out


def make_bot(name: str, seed: int, mc_budget_ms: float) -> Bot:
    if name == "random":
        return RandomBot(seed=seed)
    if name == "rules":
        return RuleBot(seed=seed)
    if name == "mc":
        return MonteCarloBot(seed=seed, budget_ms=mc_budget_ms)
    raise ValueError(f"unknown bot {name!r}: random, rules or mc")


def match_seed(game: str, players: int, group: int) -> bytes:
    """The same deals for every pair of bots compared on a game."""
    return hashlib.sha256(f"eval/{game}/{players}/{group}".encode()).digest()


def run_group(job: Job) -> GroupResult:
    result = GroupResult()
    seed = match_seed(job.game, job.players, job.group)
    lowest = GAMES[job.game].lowest_wins
    for index, lineup in enumerate(lineups(job.first, job.second, job.players)):
        bots = [
            make_bot(name, job.group * 1000 + index * 10 + seat, job.mc_budget_ms)
            for seat, name in enumerate(lineup)
        ]
        match, _ = play_local(job.game, bots, seed)
        best = min(match.totals) if lowest else max(match.totals)
        winners = [s for s, t in enumerate(match.totals) if t == best]
        for seat, name in enumerate(lineup):
            result.scores.setdefault(name, []).append(float(match.totals[seat]))
            share = 1.0 / len(winners) if seat in winners else 0.0
            result.wins.setdefault(name, []).append(share)
        for bot in bots:
            if isinstance(bot, MonteCarloBot):
                result.mc_samples += bot.samples_total
                result.mc_searches += bot.searches
        result.matches += 1
    return result


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (normal approximation)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


@dataclass
class Summary:
    game: str
    players: int
    first: str
    second: str
    groups: int
    matches: int
    seconds: float
    score: dict[str, tuple[float, float]]
    diff: tuple[float, float]
    win: dict[str, tuple[float, float]]
    mc_samples_per_search: float


def summarise(
    game: str, players: int, first: str, second: str, results: list[GroupResult], seconds: float
) -> Summary:
    def per_group(name: str, what: str) -> list[float]:
        out = []
        for r in results:
            values = (r.scores if what == "score" else r.wins)[name]
            out.append(sum(values) / len(values))
        return out

    first_scores, second_scores = per_group(first, "score"), per_group(second, "score")
    searches = sum(r.mc_searches for r in results)
    return Summary(
        game=game,
        players=players,
        first=first,
        second=second,
        groups=len(results),
        matches=sum(r.matches for r in results),
        seconds=seconds,
        score={first: mean_ci(first_scores), second: mean_ci(second_scores)},
        diff=mean_ci([b - a for a, b in zip(first_scores, second_scores, strict=True)]),
        win={first: mean_ci(per_group(first, "win")), second: mean_ci(per_group(second, "win"))},
        mc_samples_per_search=(sum(r.mc_samples for r in results) / searches) if searches else 0.0,
    )


def table(summaries: list[Summary]) -> str:
    lines = [
        "| game | players | A vs B | matches | mean total A | mean total B | B − A | "
        "B better? | win % A | win % B |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        a, b = s.first, s.second
        lowest = GAMES[s.game].lowest_wins
        d, dci = s.diff
        better = (d < -dci) if lowest else (d > dci)
        worse = (d > dci) if lowest else (d < -dci)
        verdict = "yes" if better else ("no (worse)" if worse else "no difference")
        lines.append(
            f"| {s.game} ({'low' if lowest else 'high'} wins) | {s.players} | {a} vs {b} | "
            f"{s.matches} | {_fmt(s.score[a])} | {_fmt(s.score[b])} | {_fmt(s.diff)} | "
            f"{verdict} | {_pct(s.win[a])} | {_pct(s.win[b])} |"
        )
    return "\n".join(lines)


def _fmt(value: tuple[float, float]) -> str:
    return f"{value[0]:.2f} ± {value[1]:.2f}"


def _pct(value: tuple[float, float]) -> str:
    return f"{100 * value[0]:.1f} ± {100 * value[1]:.1f}"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES), help="comma-separated")
    parser.add_argument("--players", type=int, default=0, help="0: each game's default count")
    parser.add_argument("--matches", type=int, default=1000, help="at least this many per game")
    parser.add_argument("--pairs", default="random:rules,rules:mc", help="A:B,… (B the challenger)")
    parser.add_argument("--mc-budget-ms", type=float, default=5.0)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--json", default="", help="also write the summaries to this file")
    return parser.parse_args(argv)


def jobs_for(args: argparse.Namespace) -> Iterator[tuple[str, int, str, str, list[Job]]]:
    for game in args.games.split(","):
        players = args.players or GAMES[game].default_players
        for pair in args.pairs.split(","):
            first, second = pair.split(":")
            per_group = len(lineups(first, second, players))
            groups = -(-args.matches // per_group)
            yield (
                game,
                players,
                first,
                second,
                [Job(game, players, first, second, g, args.mc_budget_ms) for g in range(groups)],
            )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    summaries: list[Summary] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for game, players, first, second, jobs in jobs_for(args):
            t0 = time.perf_counter()
            results = list(pool.map(run_group, jobs, chunksize=4))
            summary = summarise(game, players, first, second, results, time.perf_counter() - t0)
            summaries.append(summary)
            print(
                f"{game} {players}p {first} vs {second}: {summary.matches} matches in "
                f"{summary.seconds:.0f} s; {second} − {first} = {_fmt(summary.diff)}"
                + (
                    f"; mc samples/search {summary.mc_samples_per_search:.1f}"
                    if summary.mc_samples_per_search
                    else ""
                ),
                file=sys.stderr,
                flush=True,
            )
            print(table([summary]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(summaries))
    print(f"\n{sum(s.matches for s in summaries)} matches in {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps([s.__dict__ for s in summaries], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
