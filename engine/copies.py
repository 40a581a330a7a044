"""Copies of a match to play on, far cheaper than a deep copy.

Why: ``copy.deepcopy`` walks the whole log and the game's option schema: 29 ms for a Hexathlon
150 actions in, more than a playout. The state that play changes is shallow: the match, its
round and its schedule hold numbers, tuples and immutable events directly, and lists, sets or
dicts of those (a Triathlon schedule's feats are a list of sets). So each of the three is
copied with every such container copied one level down, and everything else (the game, the
options, the round plan, a scorer, a layout) is shared. ``tests/engine/test_determinize.py``
plays copies and deep copies side by side, so that a deeper state added later is noticed.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .match import Match

T = TypeVar("T")


def fork(match: Match) -> Match:
    """An independent copy of ``match`` to play on: what :meth:`Match.clone` returns."""
    other = _copy_state(match, skip="log")
    other.log = list(match.log)  # immutable events: the list is the state
    other.schedule = _copy_state(match.schedule)
    if match.round is not None:
        other.round = _copy_state(match.round)
    return other


_CONTAINERS = (list, set, dict)


def _copy_state(obj: T, skip: str = "") -> T:
    new = copy.copy(obj)
    for name in _attribute_names(type(obj)):
        value = getattr(obj, name, None)
        if isinstance(value, list):
            setattr(new, name, [copy.copy(v) if isinstance(v, _CONTAINERS) else v for v in value])
        elif isinstance(value, set | dict):
            setattr(new, name, copy.copy(value))
    if hasattr(obj, "__dict__"):
        for name, value in vars(obj).items():
            if name == skip:
                continue
            if isinstance(value, list):
                copied = [copy.copy(v) if isinstance(v, _CONTAINERS) else v for v in value]
                setattr(new, name, copied)
            elif isinstance(value, set | dict):
                setattr(new, name, copy.copy(value))
    return new


def _attribute_names(cls: type) -> tuple[str, ...]:
    """Every ``__slots__`` name of ``cls`` and its bases."""
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return tuple(n for n in names if n not in ("__dict__", "__weakref__"))
