"""A sequential test of "is a better than b": stop as soon as the evidence is strong enough.

Why sequential: a fixed number of duplicate groups is either too many (the difference was
plain after a few) or too few (it is small); Wald's sequential probability ratio test looks
after every group and stops at the first that settles it, at error rates fixed in advance.

The samples are :func:`~.crosstable.paired_differences` (positive: ``a`` did better). The two
hypotheses are about their mean, the mean score advantage of ``a`` per group: H0 ``= d0``
against H1 ``= d1`` (``d1 > d0``). The samples are modelled as normal with a variance that is
not known, and like fishtest (the Stockfish testing framework) the test is a *generalized* SPRT:
the unknown variance is replaced by its maximum-likelihood estimate under each hypothesis,
``r_i = var + (mean - d_i)^2`` (``var`` the samples' variance, dividing by ``n``), which gives
the log-likelihood ratio

    llr = n/2 * log(r0 / r1)

(fishtest's ``LLR_alt``). Its first-order expansion is fishtest's other form,
``n (d1 - d0) (2 mean - d0 - d1) / (2 var)`` (``LLR_alt2``), which agrees near the decision
boundary when the effect is small against the spread; but that form grows without bound as the
estimated variance shrinks, and a sequential test looks at every small ``n``, where a
variance estimated from two or three samples is often tiny: simulated (normal differences, 5%
error rates, ``d1`` half a standard deviation) it accepts H1 under H0 21% of the time, against
7.5% for the form used here. docs/statistics.md gives the numbers.

It stops on H1 once ``llr >= log((1 - beta) / alpha)``, on H0 once ``llr <= log(beta / (1 -
alpha))`` (Wald's bounds). With the variance estimated the error rates are close to ``alpha``
and ``beta``, not exactly them.

Degenerate samples: with fewer than two samples, or with all samples equal (variance zero),
there is no estimate of the spread, the llr is 0 and the test never stops on them; a caller
should cap the number of groups, as every sequential test needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Verdict = Literal["H0", "H1"]

MAX_EFFECT = 1e6
"""The largest ``|d0|`` and ``|d1|`` a new tournament may ask for, in points: far beyond any
game's scores. (The test itself takes any finite ones: see :meth:`Sprt.llr_from`.)"""


@dataclass(frozen=True)
class Decision:
    """Where the test stands after ``samples`` samples; ``verdict`` ``None``: go on."""

    llr: float
    lower: float
    upper: float
    samples: int
    verdict: Verdict | None


@dataclass(frozen=True)
class Sprt:
    """H0: ``a``'s mean advantage over ``b`` is ``d0``; H1: it is ``d1``.

    ``alpha`` is the chance of accepting H1 when H0 holds, ``beta`` that of accepting H0 when
    H1 holds.
    """

    a: str
    b: str
    alpha: float = 0.05
    beta: float = 0.05
    d0: float = 0.0
    d1: float = field(kw_only=True)

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be in (0, 0.5), got {value}")
        if not (math.isfinite(self.d0) and math.isfinite(self.d1)):
            raise ValueError(f"d0 and d1 must be finite, got d0={self.d0}, d1={self.d1}")
        if not self.d1 > self.d0:
            raise ValueError(f"d1 must be greater than d0, got d1={self.d1}, d0={self.d0}")
        if self.a == self.b:
            raise ValueError(f"b must differ from a, got {self.b!r} twice")

    def bounds(self) -> tuple[float, float]:
        """The llr at or below which H0 is accepted, and at or above which H1 is."""
        return (
            math.log(self.beta / (1 - self.alpha)),
            math.log((1 - self.beta) / self.alpha),
        )

    def llr(self, samples: Sequence[float]) -> float:
        """The log-likelihood ratio of H1 to H0 on ``samples`` (module doc; 0 when fewer
        than two samples or all equal)."""
        n = len(samples)
        if n < 2:
            return 0.0
        mean = math.fsum(samples) / n
        return self.llr_from(n, mean, math.fsum((x - mean) ** 2 for x in samples) / n)

    def llr_from(self, n: int, mean: float, var: float) -> float:
        """The llr from the samples' summary (count, mean, variance dividing by ``n``), for a
        caller that updates the test after every group without keeping the samples."""
        if n < 2 or not var > 0:
            return 0.0
        # n/2 log(r0 / r1) with r_i = var + (mean - d_i)^2 = hypot(sd, mean - d_i)^2, written
        # so that no square is formed: for d far from the mean (1e200 is finite) it would
        # overflow, and the tournament's every result with it.
        spread = math.sqrt(var)
        near0, near1 = math.hypot(spread, mean - self.d0), math.hypot(spread, mean - self.d1)
        return n * (math.log(near0) - math.log(near1))

    def verdict(self, llr: float) -> Verdict | None:
        """H1 at or above the upper bound, H0 at or below the lower, else ``None``: go on."""
        lower, upper = self.bounds()
        return "H1" if llr >= upper else "H0" if llr <= lower else None

    def decide(self, samples: Sequence[float]) -> Decision:
        lower, upper = self.bounds()
        llr = self.llr(samples)
        return Decision(llr, lower, upper, len(samples), self.verdict(llr))
