"""Standings: each entrant's mean score per match, with a t-interval over duplicate groups.

Why one sample per duplicate group: the matches of one group (one seed, one lineup, every
rotation of the seats) share their cards, so they are not independent; the entrant's mean over
the group is (:func:`~.results.group_means`). The interval is a Student-t interval over those
group means (``n - 1`` degrees of freedom, :mod:`.stats`); with fewer than two groups there is
no interval to give. Scores, wins and ranks are those of :func:`~.results.scored`, so a
forfeit counts as the worst total at its table and wins nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .ratings import Rating, rate
from .results import FaultKinds, Played, group_means, known, scored
from .stats import interval_bounds


@dataclass(frozen=True)
class Standing:
    entrant: str
    matches: int
    groups: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    wins: float
    """Matches won, a win shared by k seats counting 1/k."""
    faults: int
    """Faults over every seat the entrant held."""
    forfeits: int
    """Seats the entrant forfeited."""
    rating: Rating | None = None
    kinds: FaultKinds = field(default_factory=FaultKinds)
    """Its faults by kind, where the matches say (a hosted tournament's logs do)."""

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.matches if self.matches else None


def standings(
    played: Iterable[Played],
    entrants: Sequence[str],
    *,
    lowest_wins: bool,
    level: float = 0.95,
) -> list[Standing]:
    """One row per entrant, best first (by mean score; lowest first when the lowest total
    wins; at an equal mean, fewer forfeits first, so that a forfeiter whose replaced scores
    tie a player's never ranks above it; entrants without a finished match last, then by
    name).

    Nothing depends on the order of ``played``: sums are exactly rounded (``math.fsum``) and
    ratings go in plan-index order.
    """
    matches = known(played, entrants)
    counted: dict[str, int] = dict.fromkeys(entrants, 0)
    wins: dict[str, list[float]] = {e: [] for e in entrants}
    faults: dict[str, int] = dict.fromkeys(entrants, 0)
    forfeits: dict[str, int] = dict.fromkeys(entrants, 0)
    kinds: dict[str, FaultKinds] = dict.fromkeys(entrants, FaultKinds())
    for match in matches:
        for entrant in set(match.entrants):
            counted[entrant] += 1
        for seat in scored(match, lowest_wins=lowest_wins):
            wins[seat.entrant].append(seat.win_share)
            forfeits[seat.entrant] += seat.forfeited
            if match.faults:
                faults[seat.entrant] += match.faults[seat.seat]
            if match.kinds:
                kinds[seat.entrant] += match.kinds[seat.seat]
    means = group_means(matches, lowest_wins=lowest_wins)
    ratings = rate(matches, entrants, lowest_wins=lowest_wins)
    rows = []
    for entrant in entrants:
        samples = list(means.get(entrant, {}).values())
        mean, ci_low, ci_high = interval_bounds(samples, level)
        rows.append(
            Standing(
                entrant=entrant,
                matches=counted[entrant],
                groups=len(samples),
                mean=mean,
                ci_low=ci_low,
                ci_high=ci_high,
                wins=math.fsum(wins[entrant]),
                faults=faults[entrant],
                forfeits=forfeits[entrant],
                rating=ratings.get(entrant),
                kinds=kinds[entrant],
            )
        )
    sign = 1.0 if lowest_wins else -1.0
    rows.sort(key=lambda r: (r.mean is None, sign * (r.mean or 0.0), r.forfeits, r.entrant))
    return rows
