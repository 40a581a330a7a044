"""Head to head: how much better one entrant did than another, on the same cards.

Why paired differences: when ``a`` and ``b`` sit in the same duplicate group they played the
same deal from every seat, so the difference of their group means has the deal's luck taken
out twice over (once by the rotations, once by the pairing) and is a far sharper sample of
"is a better than b" than the difference of their overall means. One sample per group that
both played, in group order; the interval is the t-interval of :mod:`.stats` over them.

The sign is the game's: positive always means ``a`` did better, so a difference of totals is
negated when the lowest total wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .results import Played, group_means, known
from .stats import interval_bounds


@dataclass(frozen=True)
class Pairing:
    """``a`` against ``b``: the mean of their paired differences (positive: ``a`` better)."""

    a: str
    b: str
    groups: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


def paired_differences(
    played: Iterable[Played], a: str, b: str, *, lowest_wins: bool
) -> list[float]:
    """One sample per duplicate group that both ``a`` and ``b`` played in, in group order:
    ``a``'s mean scored score over the group minus ``b``'s (negated when the lowest total
    wins)."""
    if a == b:
        raise ValueError(f"a pairing needs two entrants, got {a!r} twice")
    return _differences(group_means(played, lowest_wins=lowest_wins), a, b, lowest_wins)


def crosstable(
    played: Iterable[Played], entrants: Sequence[str], *, lowest_wins: bool, level: float = 0.95
) -> list[Pairing]:
    """Every pair ``a`` before ``b`` in entrant order, in that order."""
    means = group_means(known(played, entrants), lowest_wins=lowest_wins)
    rows = []
    for i, a in enumerate(entrants):
        for b in entrants[i + 1 :]:
            samples = _differences(means, a, b, lowest_wins)
            mean, ci_low, ci_high = interval_bounds(samples, level)
            rows.append(
                Pairing(
                    a=a,
                    b=b,
                    groups=len(samples),
                    mean=mean,
                    ci_low=ci_low,
                    ci_high=ci_high,
                )
            )
    return rows


def _differences(
    means: Mapping[str, Mapping[int, float]], a: str, b: str, lowest_wins: bool
) -> list[float]:
    sign = -1.0 if lowest_wins else 1.0
    mine, theirs = means.get(a, {}), means.get(b, {})
    return [sign * (mine[g] - theirs[g]) for g in sorted(mine.keys() & theirs.keys())]
