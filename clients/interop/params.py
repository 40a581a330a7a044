"""A game's flat library parameters, as OpenSpiel and PettingZoo take them, into an engine setup.

Libraries pass scalars (OpenSpiel's game parameters are ints, floats, bools and strings), while
the engine's options are nested JSON. So each game has:

* ``players``;
* ``options``: a JSON object, every option of the game (nested ones included);
* one scalar parameter per top-level scalar option of the game (``target_score``, ``deck``,
  ``max_deals`` …) and ``first_dealer`` (a seat number, or -1 for ``"random"``); each one
  overrides the same key of ``options`` when it is not at its default (OpenSpiel hands a game
  every parameter, defaults included, so a default cannot be told from a value given);
* ``rounds`` for the Norwegian games: the schedule as round types joined by ``+``
  (``"pass+grand"``), a short form of ``options.rounds``.

OpenSpiel writes a game as ``name(key=value,…)`` and splits that at commas, so ``options`` may
use ``;`` for JSON's ``,`` (``{"deck": 40; "target_score": 50}``): a game whose options are
written so survives ``pyspiel.load_game(str(game))`` and state serialisation.

Everything is validated by the engine once (:func:`cardarena.engine.setup`), so a bad value is
refused with the engine's own message naming the option.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cardarena.engine import GAMES, MatchSetup, OptionError, setup

Scalar = int | float | bool | str

OPTIONS = "options"
PLAYERS = "players"
FIRST_DEALER = "first_dealer"
ROUNDS = "rounds"
SEED = "seed"


class ParameterError(ValueError):
    """A parameter the game does not take, or a value the engine refuses (the message names it)."""


def _scalar_options(game: str) -> dict[str, Scalar]:
    """The game's top-level options with a scalar JSON type, each with its default."""
    props = GAMES[game].options.describe()["properties"]
    out: dict[str, Scalar] = {}
    for key, schema in props.items():
        if schema.get("type") in ("integer", "boolean", "string") and key != FIRST_DEALER:
            out[key] = schema["default"]
    return out


def defaults(game: str) -> dict[str, Scalar]:
    """Every parameter of ``game`` with its default (OpenSpiel's ``parameter_specification``).

    ``seed`` (hex, empty by default) is OpenSpiel's only: see :mod:`.chance`.
    """
    spec = GAMES[game]
    out: dict[str, Scalar] = {PLAYERS: spec.default_players, OPTIONS: "{}", FIRST_DEALER: 0}
    if ROUNDS in spec.options.describe()["properties"]:
        out[ROUNDS] = ""
    out.update(_scalar_options(game))
    return out


def options_of(game: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The engine options that ``given`` (the parameters a caller set) mean, not yet validated."""
    allowed = defaults(game)
    unknown = sorted(set(given) - set(allowed) - {SEED})
    if unknown:
        raise ParameterError(
            f"{game} has no parameter {unknown[0]!r}; parameters: {', '.join(sorted(allowed))}"
        )
    text = given.get(OPTIONS, "{}")
    try:
        options = json.loads(text.replace(";", ",")) if isinstance(text, str) else dict(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"parameter options is not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise ParameterError("parameter options must be a JSON object")
    for key, default in allowed.items():
        if key in (PLAYERS, OPTIONS, ROUNDS) or key not in given or given[key] == default:
            continue
        value = given[key]
        if type(value) is not type(default):
            raise ParameterError(f"parameter {key} must be {type(default).__name__}, not {value!r}")
        options[key] = "random" if key == FIRST_DEALER and value == -1 else value
    rounds = str(given.get(ROUNDS, "")).strip()
    if rounds:
        options[ROUNDS] = [r.strip() for r in rounds.split("+")]
    return options


def setup_of(game: str, given: Mapping[str, Any]) -> MatchSetup:
    """The validated setup for ``game`` with the parameters ``given`` (defaults for the rest)."""
    if game not in GAMES:
        raise ParameterError(f"unknown game {game!r}; games: {', '.join(GAMES)}")
    players = given.get(PLAYERS, GAMES[game].default_players)
    try:
        return setup(game, players=players, options=options_of(game, given))
    except OptionError as exc:
        raise ParameterError(str(exc)) from None
