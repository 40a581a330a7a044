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
    (
        "heptathlon",
        {
            "players": 3,
            "rounds": "pass+clubs+queens+grand+trumps+finale+fan_tan",
            "options": (
                '{"clubs": {"all_taken_zero": true; "multiplier": 3};'
                ' "queens": {"points_per_queen": 5}; "finale": {"queen_of_clubs": 4};'
                ' "trumps": {"trump": {"mode": "random"}; "multiplier": 2};'
                ' "fan_tan": {"voluntary_pass": true; "winner_scores_zero": false;'
                ' "openers": "six_and_seven"}}'
            ),
        },
    ),
    ("crazy_sixes", {"players": 4, "pool": "rivals_only", "first_dealer": -1, "target_score": 40}),
    ("triathlon", {"first_dealer": -1, "max_deals": 3}),
]
