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

from collections.abc import Sequence
from fractions import Fraction
from math import gcd
from typing import Any, Final, cast

Score = int | Fraction

SLOTTED: Final = getattr(Fraction, "__slots__", None) == ("_numerator", "_denominator")
"""CPython 3.11 to 3.13: a Fraction is its two slots, read and stored here directly (3.12
names the making :meth:`Fraction._from_coprime_ints`); elsewhere the public way is taken."""


def _make(numerator: int, denominator: int) -> Fraction:
    """``Fraction(numerator, denominator)`` for whole numbers, ``denominator > 0``, made anew."""
    if not SLOTTED:  # another layout of Fraction: the plain constructor
        return Fraction(numerator, denominator)
    g = gcd(numerator, denominator)
    made: Any = object.__new__(Fraction)
    made._numerator = numerator // g
    made._denominator = denominator // g
    return cast(Fraction, made)


WHOLE_COUNT: Final = 1 << 11
WHOLE: Final = tuple([_make(number, 1) for number in range(WHOLE_COUNT)])
"""``Fraction(n)`` for ``0 <= n < WHOLE_COUNT``, made once: most scores and totals of a Crazy
Sixes hand are whole (a hand has one winner more often than not) and within a default target's
reach. A Fraction is immutable and compared by value, so a shared one is as good as a new one."""


def fraction(numerator: int, denominator: int) -> Fraction:
    """``Fraction(numerator, denominator)`` for whole numbers, ``denominator > 0``."""
    if numerator % denominator == 0 and 0 <= numerator < WHOLE_COUNT * denominator:
        return WHOLE[numerator // denominator]
    return _make(numerator, denominator)


def add(a: Score, b: Score) -> Score:
    """``a + b``: an int for two ints, else the exact Fraction."""
    if type(a) is int:
        if type(b) is int:
            return a + b
        an, ad = a, 1
    elif SLOTTED and type(a) is Fraction:
        slots: Any = a  # its slots, read directly: the public properties are Python calls
        an, ad = slots._numerator, slots._denominator
    else:
        an, ad = a.numerator, a.denominator
    if type(b) is int:
        bn, bd = b, 1
    elif SLOTTED and type(b) is Fraction:
        slots = b
        bn, bd = slots._numerator, slots._denominator
    else:
        bn, bd = b.numerator, b.denominator
    if ad == bd:
        return fraction(an + bn, ad)
    return fraction(an * bd + bn * ad, ad * bd)


def add_all(totals: Sequence[Score], scores: Sequence[Score]) -> tuple[Score, ...]:
    """Each total plus its seat's score (the two the same length): :func:`add` written out,
    as every round of every match ends here."""
    if len(totals) != len(scores):
        raise ValueError(f"{len(scores)} scores for {len(totals)} totals")
    sums: list[Score] = []
    for a, b in zip(totals, scores, strict=True):
        if type(a) is int:
            if type(b) is int:
                sums.append(a + b)
                continue
            an, ad = a, 1
        elif SLOTTED and type(a) is Fraction:
            slots: Any = a
            an, ad = slots._numerator, slots._denominator
        else:
            an, ad = a.numerator, a.denominator
        if type(b) is int:
            bn, bd = b, 1
        elif SLOTTED and type(b) is Fraction:
            slots = b
            bn, bd = slots._numerator, slots._denominator
        else:
            bn, bd = b.numerator, b.denominator
        if ad == bd:
            numerator, denominator = an + bn, ad
        else:
            numerator, denominator = an * bd + bn * ad, ad * bd
        if denominator == 1 and 0 <= numerator < WHOLE_COUNT:
            sums.append(WHOLE[numerator])
        else:
            sums.append(fraction(numerator, denominator))
    return tuple(sums)


def reached(totals: Sequence[Score], target: int) -> bool:
    """``max(totals) >= target``: every denominator is positive, so compare cross-multiplied."""
    for total in totals:
        if type(total) is int:
            if total >= target:
                return True
        elif SLOTTED and type(total) is Fraction:
            slots: Any = total
            if slots._numerator >= target * slots._denominator:
                return True
        elif total.numerator >= target * total.denominator:
            return True
    return False
