"""The registry of games: every preset and variant, looked up by name."""

from __future__ import annotations

from . import crazy_sixes, triathlon
from .errors import OptionError
from .norwegian import PRESETS, norwegian_game
from .schedule import GameSpec

GAMES: dict[str, GameSpec] = {
    **{name: norwegian_game(preset) for name, preset in PRESETS.items()},
    crazy_sixes.GAME.name: crazy_sixes.GAME,
    triathlon.GAME.name: triathlon.GAME,
}


def get_game(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        known = ", ".join(GAMES)
        raise OptionError("game", f"unknown game {name!r}; games: {known}") from None
