"""Copy a match fast: OpenSpiel copies a state (``copy.deepcopy`` of its attributes) at every
step of a search, and a plain deep copy of a match costs ~25 ms, nearly all of it in the
trick core's precomputed lookup tables (tuples of tuples), which no move ever changes.

:func:`clone_match` deep-copies what play changes and shares what it cannot change: the
game's spec, the normalised options, the round plan, the log's events (frozen records; the
list itself is copied) and every tuple the round holds. A copy plays on exactly like the
original and changing one never changes the other (tests/interop/test_chance.py).
"""

from __future__ import annotations

import copy
from typing import Any

from cardarena.engine import Match


def clone_match(match: Match) -> Match:
    memo: dict[int, Any] = {id(match.game): match.game, id(match.options): match.options}
    log = list(match.log)
    memo[id(match.log)] = log
    for event in log:
        memo[id(event)] = event
    if match.plan is not None:
        memo[id(match.plan)] = match.plan
    rnd = match.round
    if rnd is not None:
        for name in getattr(type(rnd), "__slots__", ()):
            _share_tuples(getattr(rnd, name, None), memo)
    for value in getattr(match.schedule, "__dict__", {}).values():
        _share_tuples(value, memo)
    return copy.deepcopy(match, memo)


def _share_tuples(value: object, memo: dict[int, Any]) -> None:
    """Share ``value`` if it is a tuple (the engine's tuples hold only immutable data: cards,
    masks, round traits), or the tuples a list holds."""
    if isinstance(value, tuple):
        memo[id(value)] = value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, tuple):
                memo[id(item)] = item
