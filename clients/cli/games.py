"""``cardarena games``: the games, their player counts and options, from the engine alone.

With ``--json`` every option schema in full (JSON-Schema-shaped, as ``ListGames`` sends it),
for programs that build a match's options; without, three lines a game for people.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from cardarena.engine import GAMES


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """list the games, their player counts and options"""
    parser.add_argument("--json", action="store_true", help="print the full option schemas as JSON")
    return run_games


def run_games(args: argparse.Namespace) -> int:
    if args.json:
        described = {
            name: {
                "title": spec.title,
                "players": list(spec.players),
                "lowest_wins": spec.lowest_wins,
                "options": spec.options.describe(),
            }
            for name, spec in GAMES.items()
        }
        print(json.dumps(described, indent=2))
        return 0
    for name, spec in GAMES.items():
        players = ", ".join(str(p) for p in spec.players)
        options = ", ".join(spec.options.fields)
        print(f"{name:12} {spec.title}")
        print(f"{'':12} {spec.summary}")
        print(f"{'':12} players: {players}; options: {options}")
    return 0
