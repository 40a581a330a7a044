"""Exact scores made and added without :class:`~fractions.Fraction`'s general machinery.

Why: Crazy Sixes shares its pool exactly, so every hand of it makes a Fraction per seat, adds
it to that seat's total and compares the totals with the target. ``Fraction(n, d)`` parses
its arguments, ``+`` dispatches through the numeric tower and ``>=`` checks abstract base
classes; together that was a fifth of a Crazy Sixes match. The functions here give the same
values, of the same types (a Fraction wherever the plain operation gives one, an ``int``
where it gives an ``int``), for a fraction of the cost; tests/engine/test_engine_fastpaths.py
compares them with the plain operations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import gcd
from typing import Final

Score = int | Fraction

_SETTERS: tuple[Callable[[Fraction, int], None], Callable[[Fraction, int], None]] | None = None
if getattr(Fraction, "__slots__", None) == ("_numerator", "_denominator"):
    # CPython 3.11 to 3.13: a Fraction is its two slots (3.12 names this _from_coprime_ints).
    _SETTERS = (
        Fraction.__dict__["_numerator"].__set__,
        Fraction.__dict__["_denominator"].__set__,
    )


def _make(numerator: int, denominator: int) -> Fraction:
    """``Fraction(numerator, denominator)`` for whole numbers, ``denominator > 0``, made anew."""
    if _SETTERS is None:  # another layout of Fraction: the plain constructor
        return Fraction(numerator, denominator)
    g = gcd(numerator, denominator)
    made = object.__new__(Fraction)
    set_numerator, set_denominator = _SETTERS
    set_numerator(made, numerator // g)
    set_denominator(made, denominator // g)
    return made


WHOLE_COUNT: Final = 1 << 11
WHOLE: Final = tuple([_make(number, 1) for number in range(WHOLE_COUNT)])
"""``Fraction(n)`` for ``0 <= n < WHOLE_COUNT``, made once: most scores and totals of a Crazy
Sixes hand are whole (a hand has one winner more often than not) and within a default target's
reach. A Fraction is immutable and compared by value, so a shared one is as good as a new one."""


def fraction(numerator: int, denominator: int) -> Fraction:
    """``Fraction(numerator, denominator)`` for whole numbers, ``denominator > 0``."""
    if denominator == 1 and 0 <= numerator < WHOLE_COUNT:
        return WHOLE[numerator]
    return _make(numerator, denominator)


def add(a: Score, b: Score) -> Score:
    """``a + b``: an int for two ints, else the exact Fraction."""
    if type(a) is int and type(b) is int:
        return a + b
    # One call for both parts (two properties of a Fraction are two calls).
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    if ad == bd:
        return fraction(an + bn, ad)
    return fraction(an * bd + bn * ad, ad * bd)


def add_all(totals: Sequence[Score], scores: Sequence[Score]) -> tuple[Score, ...]:
    """Each total plus its seat's score (the two the same length)."""
    if len(totals) != len(scores):
        raise ValueError(f"{len(scores)} scores for {len(totals)} totals")
    return tuple([add(t, s) for t, s in zip(totals, scores, strict=True)])


def reached(totals: Sequence[Score], target: int) -> bool:
    """``max(totals) >= target``: every denominator is positive, so compare cross-multiplied."""
    for total in totals:
        numerator, denominator = total.as_integer_ratio()
        if numerator >= target * denominator:
            return True
    return False
