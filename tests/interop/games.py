"""Every game and player count, and option sets that reach the other code paths."""

from __future__ import annotations

from typing import Any

from cardarena.engine import GAMES

EVERY_COUNT = [(game, n) for game, spec in GAMES.items() for n in spec.players]

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("pentathlon", {"players": 4, "first_dealer": -1}),
    (
        "hexathlon",
        {"players": 3, "options": '{"fan_tan": {"voluntary_pass": true; "multiplier": 2}}'},
    ),
    ("heptathlon", {"players": 5, "rounds": "trumps+finale+fan_tan"}),
    ("crazy_sixes", {"players": 3, "deck": 40, "target_score": 30, "split": "floor"}),
    ("triathlon", {"max_deals": 2, "zero_is_multiple": True, "end": "triathlon_in_one_deal"}),
]
