"""Copies of a match to play on, far cheaper than a deep copy: :func:`fork` and :func:`fill`.

Why: ``copy.deepcopy`` walks the whole log and the game's option schema: 29 ms for a Hexathlon
150 actions in, more than a playout. The state that play changes is shallow: the match, its
round and its schedule hold numbers, tuples and immutable events directly, and lists or sets
of those (a Triathlon schedule's feats are a list of sets). So :meth:`Match.clone` copies the
match, and each round core and schedule copies itself (its ``copy``): every such container is
copied, everything else (the game, the options, the round plan, a scorer, a layout) shared,
and a schedule that play never changes is its own copy.

How: each copy starts from an empty instance, ``Cls.__new__(Cls)``, which :func:`fill` gives
every attribute its class names, in two tuples: shared, and copied.
The classes copied so write ``__new__`` out, because the optional compiled build's default
``__new__`` (mypyc's) runs ``__init__``, which needs a deal and would play the start again;
that is also why ``copy.copy`` could not copy them there. ``tests/engine/test_clone.py``
checks that a clone has every attribute, shares no container with its original and plays
apart from it, so that a state added later and not copied is noticed;
``tests/engine/test_determinize.py`` plays clones and deep copies side by side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .match import Match

T = TypeVar("T")


def fill(new: T, old: T, shared: tuple[str, ...], copied: tuple[str, ...]) -> T:
    """``new``, an empty instance (``Cls.__new__(Cls)``), given ``old``'s state: each attribute
    named in ``shared`` as it is (numbers, tuples, objects play never changes), each named in
    ``copied`` (a list or set of such) copied. Each class names its attributes once, in the
    two tuples; ``tests/engine/test_clone.py`` holds the tuples to every attribute there is."""
    for name in shared:
        setattr(new, name, getattr(old, name))
    for name in copied:
        setattr(new, name, getattr(old, name).copy())
    return new


def fork(match: Match) -> Match:
    """An independent copy of ``match`` to play on: :meth:`Match.clone`, for the callers (the
    Monte Carlo bots, the determinizer, the OpenSpiel state) that name it so."""
    return match.clone()
