"""Student-t intervals with no dependency: the mean of samples and the half-width around it.

Why not SciPy: the project needs nothing else from it. The t quantile comes from the
regularised incomplete beta function (a continued fraction, Lentz's method), then bisection.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


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


def interval_bounds(
    samples: Sequence[float], level: float = 0.95
) -> tuple[float | None, float | None, float | None]:
    """The mean and the two ends of its ``level`` t-interval, as a row of the standings or of
    the crosstable shows them: the ends are ``None`` where :func:`mean_interval` has no
    half-width, all three where there are no samples."""
    mean, half = mean_interval(samples, level)
    if mean is None or half is None:
        return mean, None, None
    return mean, mean - half, mean + half


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
