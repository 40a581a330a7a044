"""Standings: mean score per match with a 95% confidence interval over duplicate groups.

Why one sample per duplicate group: the matches of one group (one seed, one lineup, every
rotation of the seats) share their cards, so they are not independent; the bot's mean over
the group is, and in that mean the luck of the deal has cancelled out. The interval is a
Student-t interval over those group means (``n - 1`` degrees of freedom, :mod:`.stats`); with
fewer than two groups there is no interval to give.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .faults import Faults, merge
from .outcomes import MatchResult
from .ratings import Rating
from .stats import mean_interval


@dataclass(frozen=True)
class Standing:
    bot: str
    matches: int
    groups: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    wins: float
    """Matches won, a win shared by k seats counting 1/k."""
    faults: Faults
    rating: Rating | None = None

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.matches if self.matches else None


def standings(
    results: Sequence[MatchResult],
    bots: Sequence[str],
    *,
    lowest_wins: bool,
    ratings: Mapping[str, Rating] | None = None,
    level: float = 0.95,
) -> list[Standing]:
    """One row per bot, best first (by mean score; lowest first when the lowest total wins)."""
    samples: dict[str, dict[int, list[float]]] = {b: defaultdict(list) for b in bots}
    matches: dict[str, int] = dict.fromkeys(bots, 0)
    wins: dict[str, float] = dict.fromkeys(bots, 0.0)
    faults: dict[str, list[Faults]] = {b: [] for b in bots}
    for result in results:
        for seat, bot in enumerate(result.bots):
            if seat < len(result.faults):
                faults[bot].append(result.faults[seat])
        if not result.ok:
            continue
        for bot in set(result.bots):
            matches[bot] += 1
        for seat, bot in enumerate(result.bots):
            samples[bot][result.plan.group].append(float(result.totals[seat]))
            if seat in result.winners:
                wins[bot] += 1 / len(result.winners)
    rows = []
    for bot in bots:
        group_means = [statistics.fmean(v) for v in samples[bot].values()]
        mean, half = mean_interval(group_means, level)
        rows.append(
            Standing(
                bot=bot,
                matches=matches[bot],
                groups=len(group_means),
                mean=mean,
                ci_low=None if mean is None or half is None else mean - half,
                ci_high=None if mean is None or half is None else mean + half,
                wins=wins[bot],
                faults=merge(faults[bot]),
                rating=(ratings or {}).get(bot),
            )
        )
    sign = 1.0 if lowest_wins else -1.0
    rows.sort(key=lambda r: (r.mean is None, sign * (r.mean or 0.0), r.bot))
    return rows
