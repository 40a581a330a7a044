"""The one check both layout games' deal tests make: a seeded match's first deal has the
hand sizes of the rules, held and recorded alike, and which cards it dealt in all.
"""

from __future__ import annotations

from typing import Any

from cardarena.engine import new_match
from cardarena.engine.events import Dealt


def cards_dealt(game: str, players: int, options: dict[str, Any], sizes: tuple[int, ...]) -> int:
    """Every card dealt to the hands of a new ``game`` match (a fixed seed), as a mask, once
    its hands and its ``Dealt`` event both give ``sizes``."""
    match = new_match(game, players=players, seed=bytes(range(32)), options=options)
    (dealt,) = [e for e in match.log if isinstance(e, Dealt)]
    assert tuple(h.bit_count() for h in match.hands) == sizes == dealt.hand_sizes
    whole = 0
    for hand in match.hands:
        whole |= hand
    return whole
