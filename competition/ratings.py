"""OpenSkill ratings (Plackett-Luce) from the finishing order of every match.

Why ratings beside the mean score: a mean score depends on the rivals an entrant happened to
meet and cannot be compared across tournaments; a rating folds in who beat whom, with its own
uncertainty (sigma). Each seat is a one-player team ranked as :func:`~.results.scored` ranks it:
by its total (highest first, or lowest first in a game where the lowest total wins; equal
totals share a rank), a forfeited seat last. Matches are rated in plan-index order, never
completion order, so the same tournament gives the same ratings however its matches were
interleaved. An entrant holding several seats of one match (fewer entrants than seats) is
rated once per seat from the same prior, and its new rating is their mean.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from .results import Played, known, scored


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """A conservative skill estimate, mu - 3 sigma, as leaderboards usually sort by."""
        return self.mu - 3 * self.sigma


def rate(
    played: Iterable[Played], entrants: Sequence[str], *, lowest_wins: bool
) -> dict[str, Rating]:
    """Every entrant's rating after ``played`` (in index order), from OpenSkill's prior."""
    model = PlackettLuce()
    current: dict[str, PlackettLuceRating] = {e: model.rating(name=e) for e in entrants}
    for match in sorted(known(played, entrants), key=lambda m: m.index):
        rate_one(model, current, match, lowest_wins=lowest_wins)
    return {e: Rating(r.mu, r.sigma) for e, r in current.items()}


def rate_one(
    model: PlackettLuce,
    current: dict[str, PlackettLuceRating],
    match: Played,
    *,
    lowest_wins: bool,
) -> None:
    """Update ``current`` (every entrant of ``match`` in it) by one more match: the step
    :func:`rate` takes per match, and a ladder's board per match as its prefix grows."""
    seats = scored(match, lowest_wins=lowest_wins)
    teams = [
        [model.rating(mu=current[s.entrant].mu, sigma=current[s.entrant].sigma)] for s in seats
    ]
    rated = model.rate(teams, ranks=[float(s.rank) for s in seats])
    for entrant in dict.fromkeys(match.entrants):
        mine = [rated[s.seat][0] for s in seats if s.entrant == entrant]
        current[entrant] = model.rating(
            mu=statistics.fmean(r.mu for r in mine),
            sigma=statistics.fmean(r.sigma for r in mine),
            name=entrant,
        )
