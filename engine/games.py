"""The registry of games: every preset and variant, looked up by name, and the traits of
every round they play (the one place that knows a game or a round kind by its name)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from . import crazy_sixes, triathlon
from .errors import OptionError
from .norwegian import PRESETS, norwegian_game
from .schedule import GameSpec
from .traits import RoundTraits, TrickScoring

GAMES: dict[str, GameSpec] = {
    **{name: norwegian_game(preset) for name, preset in PRESETS.items()},
    crazy_sixes.GAME.name: crazy_sixes.GAME,
    triathlon.GAME.name: triathlon.GAME,
}

ROUND_KINDS: frozenset[str] = frozenset(kind for game in GAMES.values() for kind in game.kinds)
"""Every kind of round any game plays (``RoundStarted.kind``)."""


def get_game(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        known = ", ".join(GAMES)
        raise OptionError("game", f"unknown game {name!r}; games: {known}") from None


def round_traits(game: str, players: int, options: Mapping[str, Any], index: int) -> RoundTraits:
    """What round ``index`` of a match of ``game`` is, from its public start (``MatchStarted``:
    the game, the players and the normalised options): look it up once, at ``RoundStarted``.

    Raises :class:`OptionError` for an unknown game, and ``LookupError`` when the options have
    no such round (a log that does not come from the engine)."""
    return get_game(game).round_traits(options, players, index)


@lru_cache(maxsize=64)
def kind_traits(kind: str) -> RoundTraits | None:
    """What a kind of round is, known only by its name: a round of that kind in the first game
    that plays it, with that game's default options and players (``None``: no such kind)."""
    for spec in GAMES.values():
        if kind in spec.kinds:
            return spec.kind_traits(kind, spec.options.validate({}, ""), spec.default_players)
    return None


def kind_scoring(kind: str) -> TrickScoring | None:
    """What a kind of trick round scores with default options (``None``: not one)."""
    traits = kind_traits(kind)
    return None if traits is None else traits.scoring
