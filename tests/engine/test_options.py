"""RULES.md conventions: options are validated once, at creation, with errors that name them."""

from __future__ import annotations

from typing import Any

import pytest

from cardarena.engine import GAMES, OptionError, new_match, validate_options

SEED = bytes(32)


def create(game: str, options: Any, players: int | None = None) -> Any:
    return new_match(game, seed=SEED, players=players, options=options)


@pytest.mark.parametrize(
    ("game", "options", "path", "fragment"),
    [
        ("hexathlon", {"colour": "red"}, "colour", "unknown option"),
        (
            "hexathlon",
            {"trumps": {"trump": {"mode": "fixed", "suit": "S", "x": 1}}},
            "trumps.trump.x",
            "unknown",
        ),
        (
            "hexathlon",
            {"fan_tan": {"openers": "eight"}},
            "fan_tan.openers",
            "'seven', 'six_and_seven'",
        ),
        ("hexathlon", {"grand": {"multiplier": 0}}, "grand.multiplier", "at least 1"),
        ("hexathlon", {"grand": {"multiplier": True}}, "grand.multiplier", "boolean"),
        ("hexathlon", {"grand": {"multiplier": 2.5}}, "grand.multiplier", "whole number"),
        ("hexathlon", {"grand": {"multiplier": "2"}}, "grand.multiplier", "whole number"),
        (
            "hexathlon",
            {"queens": {"points_per_queen": -1}},
            "queens.points_per_queen",
            "at least 0",
        ),
        (
            "hexathlon",
            {"fan_tan": {"voluntary_pass": 1}},
            "fan_tan.voluntary_pass",
            "true or false",
        ),
        ("hexathlon", {"rounds": []}, "rounds", "non-empty"),
        ("hexathlon", {"rounds": ["pass", "hearts"]}, "rounds[1].type", "unknown round type"),
        (
            "hexathlon",
            {"rounds": [{"type": "fan_tan", "queen_of_clubs": 4}]},
            "rounds[0].queen_of_clubs",
            "unknown",
        ),
        ("hexathlon", {"rounds": [{"multiplier": 2}]}, "rounds[0].type", "unknown round type"),
        ("hexathlon", {"trumps": {"trump": {"mode": "fixed"}}}, "trumps.trump.suit", "required"),
        (
            "hexathlon",
            {"trumps": {"trump": {"mode": "fixed", "suit": "X"}}},
            "trumps.trump.suit",
            "one of",
        ),
        ("hexathlon", {"trumps": {"trump": "S"}}, "trumps.trump", "expected an object"),
        ("hexathlon", {"first_dealer": 4}, "first_dealer", "does not exist"),
        ("hexathlon", {"first_dealer": "left"}, "first_dealer", "random"),
        ("hexathlon", ["pass"], "(root)", "expected an object"),
        ("crazy_sixes", {"deck": 52}, "deck", "48, 40"),
        ("crazy_sixes", {"target_score": 0}, "target_score", "at least 1"),
        ("crazy_sixes", {"split": "round"}, "split", "'exact', 'floor'"),
        ("crazy_sixes", {"pool": "winners"}, "pool", "rivals_only"),
        ("triathlon", {"max_deals": 0}, "max_deals", "at least 1"),
        ("triathlon", {"end": "sudden_death"}, "end", "all_feats_cumulative"),
        ("triathlon", {"zero_is_multiple": "yes"}, "zero_is_multiple", "true or false"),
    ],
)
def test_bad_options_are_rejected_with_their_path(
    game: str, options: Any, path: str, fragment: str
) -> None:
    with pytest.raises(OptionError) as caught:
        create(game, options)
    assert path in (caught.value.path, "(root)")
    assert f"option {path}" in str(caught.value)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("game", "players"), [("hexathlon", 2), ("hexathlon", 6), ("crazy_sixes", 5), ("triathlon", 4)]
)
def test_player_counts(game: str, players: int) -> None:
    with pytest.raises(OptionError, match="players"):
        create(game, {}, players)


def test_unknown_game_names_the_games() -> None:
    with pytest.raises(OptionError, match="hexathlon"):
        new_match("hearts", seed=SEED)


def test_whole_floats_are_whole_numbers() -> None:
    match = create("crazy_sixes", {"target_score": 50.0, "deck": 40.0})
    assert match.options["target_score"] == 50 and isinstance(match.options["target_score"], int)
    assert match.options["deck"] == 40


def test_options_of_unused_types_are_validated_and_harmless() -> None:
    match = create("pentathlon", {"finale": {"queen_of_clubs": 4}, "trumps": {"multiplier": 3}})
    assert match.options["finale"]["queen_of_clubs"] == 4
    with pytest.raises(OptionError, match=r"finale\.queen_of_clubs"):
        create("pentathlon", {"finale": {"queen_of_clubs": -4}})


@pytest.mark.parametrize("game", list(GAMES))
def test_normalising_is_idempotent_and_fills_defaults(game: str) -> None:
    spec = GAMES[game]
    once = validate_options(spec, spec.default_players, {})
    assert validate_options(spec, spec.default_players, once) == once
    assert once["first_dealer"] == 0


@pytest.mark.parametrize("game", list(GAMES))
def test_every_game_describes_its_options(game: str) -> None:
    schema = GAMES[game].options.describe()
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert "first_dealer" in schema["properties"]
    for prop in schema["properties"].values():
        assert "default" in prop or prop.get("type") == "object"


def test_norwegian_schema_lists_round_types_and_their_defaults() -> None:
    props = GAMES["hexathlon"].options.describe()["properties"]
    assert props["rounds"]["default"] == ["pass", "clubs", "queens", "fan_tan", "grand", "trumps"]
    assert props["fan_tan"]["properties"]["openers"]["default"] == "six_and_seven"
    assert GAMES["heptathlon"].options.describe()["properties"]["trumps"]["properties"]["trump"][
        "default"
    ] == {
        "mode": "fixed",
        "suit": "S",
    }
