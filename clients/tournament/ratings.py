"""OpenSkill ratings (Plackett-Luce) from the finishing order of every match.

Why ratings beside the mean score: a mean score depends on the rivals a bot happened to meet
and cannot be compared across tournaments; a rating folds in who beat whom, with its own
uncertainty (sigma). Each seat is a one-player team ranked by its total: highest first, or
lowest first in a game where the lowest total wins; equal totals share a rank. Matches are
rated in schedule order, never completion order, so the same tournament gives the same
ratings however its matches were interleaved. A bot holding several seats of one match (fewer
bots than seats) is rated once per seat from the same prior, and its new rating is their mean.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from .outcomes import MatchResult


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """A conservative skill estimate, mu - 3 sigma, as leaderboards usually sort by."""
        return self.mu - 3 * self.sigma


def ranks(totals: Sequence[float], *, lowest_wins: bool) -> list[int]:
    """1 for the best total; ties share the better rank (competition ranking)."""
    sign = 1 if lowest_wins else -1
    return [1 + sum(sign * other < sign * mine for other in totals) for mine in totals]


def rate(
    results: Sequence[MatchResult], bots: Sequence[str], *, lowest_wins: bool
) -> dict[str, Rating]:
    model = PlackettLuce()
    current: dict[str, PlackettLuceRating] = {b: model.rating(name=b) for b in bots}
    for result in sorted(results, key=lambda r: r.plan.index):
        if not result.ok:
            continue
        teams = [[model.rating(mu=current[b].mu, sigma=current[b].sigma)] for b in result.bots]
        order = ranks([float(t) for t in result.totals], lowest_wins=lowest_wins)
        rated = model.rate(teams, ranks=[float(r) for r in order])
        for bot in set(result.bots):
            mine = [rated[seat][0] for seat, b in enumerate(result.bots) if b == bot]
            current[bot] = model.rating(
                mu=statistics.fmean(r.mu for r in mine),
                sigma=statistics.fmean(r.sigma for r in mine),
                name=bot,
            )
    return {b: Rating(r.mu, r.sigma) for b, r in current.items()}
