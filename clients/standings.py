"""Standings: mean score per match with a 95% confidence interval over duplicate groups.

Why one sample per duplicate group: the matches of one group (one seed, one lineup, every
rotation of the seats) share their cards, so they are not independent; the bot's mean over
the group is, and in that mean the luck of the deal has cancelled out. The interval is a
Student-t interval over those group means (``n - 1`` degrees of freedom); with fewer than two
groups there is no interval to give.

The t quantile is computed here (regularised incomplete beta, then bisection) rather than
taken from SciPy, which the project does not otherwise need.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .outcomes import MatchResult
from .ratings import Rating
from .seats import Faults, merge


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


def mean_interval(
    samples: Sequence[float], level: float = 0.95
) -> tuple[float | None, float | None]:
    """The mean and the half-width of its two-sided ``level`` t-interval (``None`` if n < 2)."""
    n = len(samples)
    if n == 0:
        return None, None
    mean = statistics.fmean(samples)
    if n < 2:
        return mean, None
    error = statistics.stdev(samples) / math.sqrt(n)
    return mean, t_quantile(0.5 + level / 2, n - 1) * error


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom, for 0.5 <= p < 1."""
    if not 0.5 <= p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if t_cdf(middle, df) < p else (low, middle)
    return (low + high) / 2


def t_cdf(t: float, df: int) -> float:
    tail = 0.5 * betainc(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t > 0 else tail


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return h
