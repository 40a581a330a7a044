"""Pentathlon, Hexathlon and Heptathlon: the Norwegian family (RULES.md §1).

Each round type is data: a trick-round scorer with what it scores and whether it has a trump
option (:class:`TrickType`), or Fan Tan (:class:`FanTanType`), plus its options. Both kinds
of type answer the same two hooks, ``traits`` (the round as every seat may know it) and
``build`` (from the player count and the round's options, the builder of the round core that
the deal's hands, dealer and trump complete: a :data:`~.schedule.RoundBuilder`), so the
schedule never asks which type a round is. A preset is a round list plus per-type defaults;
every option of RULES.md §1.6 is in the schema below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache, partial
from typing import Any

from .cards import CLUBS, FRENCH_SUIT_CODES, SUIT_MASKS, french
from .decks import FRENCH_52, trick_deck
from .errors import OptionError
from .events import Event, Score
from .fantan import FAN_TAN_LAYOUTS, FanTanRound
from .options import (
    JSON,
    BoolSpec,
    ChoiceSpec,
    IntSpec,
    ObjectSpec,
    SeatSpec,
    Spec,
    TaggedSpec,
)
from .schedule import GameSpec, Round, RoundBuilder, RoundPlan, multiplied
from .traits import RoundTraits, TrickScoring, Trump
from .tricks import NO_TRUMP, TrickRound

CLUBS_MASK = SUIT_MASKS[CLUBS]
QUEEN_OF_CLUBS = 1 << french(CLUBS, 12)
QUEENS_MASK = sum(1 << french(s, 12) for s in range(4))

TrickScorer = Callable[[TrickRound, Mapping[str, Any]], list[int]]
"""``(round, that round's options) -> raw scores``, before the multiplier."""


def score_pass(r: TrickRound, _: Mapping[str, Any]) -> list[int]:
    return list(r.tricks)


def score_clubs(r: TrickRound, params: Mapping[str, Any]) -> list[int]:
    counts = [(t & CLUBS_MASK).bit_count() for t in r.taken]
    if params["all_taken_zero"]:
        return [0 if c == 13 else c for c in counts]
    return counts


def score_queens(r: TrickRound, params: Mapping[str, Any]) -> list[int]:
    return [(t & QUEENS_MASK).bit_count() * params["points_per_queen"] for t in r.taken]


def score_grand(r: TrickRound, _: Mapping[str, Any]) -> list[int]:
    return [-t for t in r.tricks]


def score_finale(r: TrickRound, params: Mapping[str, Any]) -> list[int]:
    return [
        (params["queen_of_clubs"] if t & QUEEN_OF_CLUBS else 0)
        + 4 * (t & QUEENS_MASK & ~QUEEN_OF_CLUBS).bit_count()
        + (t & CLUBS_MASK & ~QUEEN_OF_CLUBS).bit_count()
        for t in r.taken
    ]


TRICK_SCORERS: dict[str, TrickScorer] = {
    "pass": score_pass,
    "clubs": score_clubs,
    "queens": score_queens,
    "grand": score_grand,
    "trumps": score_grand,
    "finale": score_finale,
}
"""Every trick round type; ``fan_tan`` is the one round type that is not played in tricks."""


PER_TRICK = TrickScoring.of(1)
CLUBS_TAKEN = TrickScoring.of(0, [(CLUBS_MASK, 1)])
PER_TRICK_GRABBED = TrickScoring.of(-1)


def _scoring_pass(_: int) -> TrickScoring:
    return PER_TRICK


def _scoring_clubs(_: int) -> TrickScoring:
    return CLUBS_TAKEN


def _scoring_queens(points_per_queen: int) -> TrickScoring:
    return TrickScoring.of(0, [(QUEENS_MASK, points_per_queen)])


def _scoring_grand(_: int) -> TrickScoring:
    return PER_TRICK_GRABBED


def _scoring_finale(queen_of_clubs: int) -> TrickScoring:
    return TrickScoring.of(
        0,
        [
            (QUEEN_OF_CLUBS, queen_of_clubs),
            (QUEENS_MASK & ~QUEEN_OF_CLUBS, 4),
            (CLUBS_MASK & ~QUEEN_OF_CLUBS, 1),
        ],
    )


@dataclass(frozen=True)
class TrickType:
    """A round type played in tricks: its scorer, what that scores as data (the scorer's
    additive part, for seats: see :class:`TrickScoring`) from the one option it reads
    (``points``), and whether the type's ``trump`` option gives it a trump suit (fixed, or
    drawn per round)."""

    scorer: TrickScorer
    scoring: Callable[[int], TrickScoring]
    """The scoring, from the value of the option ``points`` (0 when it reads none)."""
    points: str | None = None
    trump_option: bool = False
    _traits: Callable[[str, int, str | None, int], RoundTraits] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # One shared record per distinct round: a schedule asks for one per round of every
        # match, and looking it up costs a fraction of building it.
        object.__setattr__(self, "_traits", lru_cache(maxsize=64)(self._make_traits))

    def traits(self, kind: str, params: Mapping[str, Any], players: int) -> RoundTraits:
        points = params[self.points] if self.points is not None else 0
        fixed = None
        if self.trump_option and params["trump"]["mode"] == "fixed":
            fixed = params["trump"]["suit"]
        return self._traits(kind, players, fixed, points)

    def _make_traits(self, kind: str, players: int, fixed: str | None, points: int) -> RoundTraits:
        trump, suit = Trump.NONE, None
        if self.trump_option:
            if fixed is None:
                trump = Trump.DRAWN
            else:
                trump, suit = Trump.FIXED, FRENCH_SUIT_CODES.index(fixed)
        return RoundTraits(kind, trick_deck(players), None, trump, suit, self.scoring(points))

    def build(self, players: int, params: Mapping[str, Any]) -> RoundBuilder:
        score = partial(_score_with, self.scorer, params)

        def trick_round(hands: tuple[int, ...], dealer: int, trump: int) -> Round:
            return TrickRound(
                players, hands, dealer, score, trump=trump if trump >= 0 else NO_TRUMP
            )

        return trick_round


@dataclass(frozen=True)
class FanTanType:
    """Fan Tan: a layout round of the whole French deck, its openers and passes as options."""

    def traits(self, kind: str, params: Mapping[str, Any], players: int) -> RoundTraits:
        return _fan_tan_traits(kind, params["openers"] == "six_and_seven", params["voluntary_pass"])

    def build(self, players: int, params: Mapping[str, Any]) -> RoundBuilder:
        def fan_tan_round(hands: tuple[int, ...], dealer: int, _trump: int) -> Round:
            return FanTanRound(
                players,
                hands,
                dealer,
                openers=params["openers"],
                voluntary_pass=params["voluntary_pass"],
                winner_scores_zero=params["winner_scores_zero"],
            )

        return fan_tan_round


@cache
def _fan_tan_traits(kind: str, six_and_seven: bool, voluntary_pass: bool) -> RoundTraits:
    layout = FAN_TAN_LAYOUTS[six_and_seven]
    return RoundTraits(kind, FRENCH_52, layout, voluntary_pass=voluntary_pass)


KINDS: dict[str, TrickType | FanTanType] = {
    "pass": TrickType(score_pass, _scoring_pass),
    "clubs": TrickType(score_clubs, _scoring_clubs),
    "queens": TrickType(score_queens, _scoring_queens, "points_per_queen"),
    "grand": TrickType(score_grand, _scoring_grand),
    "trumps": TrickType(score_grand, _scoring_grand, trump_option=True),
    "finale": TrickType(score_finale, _scoring_finale, "queen_of_clubs"),
    "fan_tan": FanTanType(),
}
"""How each round type plays, whatever the preset (the presets differ in option defaults)."""


@dataclass(frozen=True)
class RoundType:
    """A round type's description and its options beyond ``multiplier``."""

    name: str
    description: str
    extra_options: Mapping[str, Spec]


MAX_ROUNDS = 100
"""A service limit, not a rule: a schedule longer than this is refused."""
MULTIPLIER = IntSpec(1, 1, 1000, description="integer factor on every score of this round type")
TRUMP_SPEC_RANDOM: Mapping[str, JSON] = {"mode": "random"}
SUIT_CHOICE = ChoiceSpec(None, tuple(FRENCH_SUIT_CODES), "the trump suit")


def trump_spec(default: Mapping[str, JSON]) -> TaggedSpec:
    return TaggedSpec(
        "mode",
        {
            "random": ObjectSpec({}),
            "fixed": ObjectSpec({"suit": SUIT_CHOICE}, required=frozenset({"suit"})),
        },
        default,
        'a uniformly random suit drawn per round, or {"mode": "fixed", "suit": "S"}',
    )


def round_types(preset: Preset) -> dict[str, RoundType]:
    return {
        "pass": RoundType("pass", "+1 per trick taken", {}),
        "clubs": RoundType(
            "clubs",
            "+1 per club taken",
            {"all_taken_zero": BoolSpec(False, "taking all 13 clubs scores 0")},
        ),
        "queens": RoundType(
            "queens",
            "points per queen taken",
            {"points_per_queen": IntSpec(4, 0, 1000, description="points per queen taken")},
        ),
        "grand": RoundType("grand", "-1 per trick taken", {}),
        "trumps": RoundType(
            "trumps",
            "-1 per trick taken, with a trump suit",
            {"trump": trump_spec(preset.trump)},
        ),
        "finale": RoundType(
            "finale",
            "QC, each other queen 4, each other club 1",
            {"queen_of_clubs": IntSpec(8, 0, 1000, description="points for the queen of clubs")},
        ),
        "fan_tan": RoundType(
            "fan_tan",
            "solitaire: passes plus cards left; the first out scores 0",
            {
                "openers": ChoiceSpec(
                    preset.openers,
                    ("seven", "six_and_seven"),
                    "seven: plain Fan Tan; six_and_seven: sixes start low stacks, sevens high",
                ),
                "voluntary_pass": BoolSpec(False, "a player may pass even when able to play"),
                "winner_scores_zero": BoolSpec(
                    True, "false: the player who went out scores their own passes"
                ),
            },
        ),
    }


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    rounds: tuple[str, ...]
    openers: str
    trump: Mapping[str, JSON]
    summary: str


class RoundsSpec:
    """``rounds``: a non-empty list of type names or ``{"type": …, …overrides}`` objects."""

    def __init__(
        self,
        types: Mapping[str, RoundType],
        sections: Mapping[str, ObjectSpec],
        default: Sequence[str],
    ):
        self.types = types
        self.overrides = {k: ObjectSpec(s.fields, fill_defaults=False) for k, s in sections.items()}
        self.default = list(default)

    def validate(self, value: JSON, path: str) -> list[dict[str, JSON]]:
        if not isinstance(value, list | tuple) or not value:
            raise OptionError(path, "expected a non-empty list of round types")
        if len(value) > MAX_ROUNDS:
            raise OptionError(path, f"at most {MAX_ROUNDS} rounds, got {len(value)}")
        return [self._entry(item, f"{path}[{i}]") for i, item in enumerate(value)]

    def _entry(self, item: JSON, path: str) -> dict[str, JSON]:
        names = ", ".join(self.types)
        if isinstance(item, str):
            item = {"type": item}
        if not isinstance(item, Mapping):
            raise OptionError(path, f"expected a round type name or an object; types: {names}")
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in self.types:
            raise OptionError(f"{path}.type", f"unknown round type {kind!r}; types: {names}")
        rest = {k: v for k, v in item.items() if k != "type"}
        return {"type": kind, **self.overrides[kind].validate(rest, path)}

    def describe(self) -> dict[str, JSON]:
        overrides = []
        for kind, spec in self.overrides.items():
            shape = spec.describe()
            shape["properties"] = {"type": {"const": kind}, **shape["properties"]}
            shape["required"] = ["type"]
            overrides.append(shape)
        return {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_ROUNDS,
            "items": {"oneOf": [{"enum": list(self.types)}, *overrides]},
            "default": self.default,
            "description": "the rounds in order; repeats allowed; an object overrides that round's options",
        }


def options_schema(preset: Preset) -> ObjectSpec:
    types = round_types(preset)
    sections = {
        name: ObjectSpec({"multiplier": MULTIPLIER, **t.extra_options}, t.description)
        for name, t in types.items()
    }
    return ObjectSpec(
        {
            "rounds": RoundsSpec(types, sections, preset.rounds),
            "first_dealer": SeatSpec(0, 'seat of the first dealer, or "random"'),
            **sections,
        }
    )


def resolve_rounds(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each round's full parameters: the type's section, then the round's own overrides."""
    return [{"type": r["type"], **options[r["type"]], **r} for r in options["rounds"]]


def round_traits(options: Mapping[str, Any], players: int, index: int) -> RoundTraits:
    """The traits of round ``index`` of a Norwegian match with these normalised options."""
    params = resolve_rounds(options)[index]
    return KINDS[params["type"]].traits(params["type"], params, players)


def kind_traits(kind: str, options: Mapping[str, Any], players: int) -> RoundTraits:
    """The traits of a round of type ``kind`` as its section of the options sets it."""
    return KINDS[kind].traits(kind, {"type": kind, **options[kind]}, players)


class NorwegianSchedule:
    def __init__(self, options: Mapping[str, Any], players: int) -> None:
        self.players = players
        self.rounds = resolve_rounds(options)
        self.traits = [KINDS[p["type"]].traits(p["type"], p, players) for p in self.rounds]

    def next_round(
        self, index: int, totals: tuple[Score, ...], previous: Round | None
    ) -> RoundPlan | None:
        if index >= len(self.rounds):
            return None
        params = self.rounds[index]
        build = KINDS[params["type"]].build(self.players, params)
        return RoundPlan(self.traits[index], build, params["multiplier"])

    def score(
        self, index: int, played: Round, plan: RoundPlan
    ) -> tuple[tuple[Score, ...], list[Event]]:
        return multiplied(played.scores(), plan.multiplier), []

    def copy(self) -> NorwegianSchedule:
        """Itself: its rounds and traits are read, never changed, by play."""
        return self


PRESETS: dict[str, Preset] = {
    "pentathlon": Preset(
        "pentathlon",
        "Pentathlon (Femkamp)",
        ("pass", "clubs", "queens", "fan_tan", "grand"),
        "seven",
        TRUMP_SPEC_RANDOM,
        "Five rounds: dodge tricks, clubs and queens, a plain Fan Tan, then grab tricks. Lowest total wins.",
    ),
    "hexathlon": Preset(
        "hexathlon",
        "Hexathlon (Sekskamp, Kanin)",
        ("pass", "clubs", "queens", "fan_tan", "grand", "trumps"),
        "six_and_seven",
        TRUMP_SPEC_RANDOM,
        "Pentathlon with a six-and-seven Fan Tan and a last round with a random trump. Lowest total wins.",
    ),
    "heptathlon": Preset(
        "heptathlon",
        "Heptathlon (Sjukamp)",
        ("pass", "clubs", "fan_tan", "queens", "grand", "trumps", "finale"),
        "seven",
        {"mode": "fixed", "suit": "S"},
        "Seven rounds, spades trump in round six and a finale of clubs and queens. Lowest total wins.",
    ),
}


def norwegian_game(preset: Preset) -> GameSpec:
    return GameSpec(
        name=preset.name,
        title=preset.title,
        summary=preset.summary,
        players=(3, 4, 5),
        lowest_wins=True,
        options=options_schema(preset),
        make_schedule=NorwegianSchedule,
        kinds=tuple(KINDS),
        round_traits=round_traits,
        kind_traits=kind_traits,
    )


def _score_with(scorer: TrickScorer, params: Mapping[str, Any], played: TrickRound) -> list[int]:
    return scorer(played, params)
