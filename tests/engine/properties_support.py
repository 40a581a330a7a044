"""What the property tests play: the configurations under test (every game, player count and
the interesting options), the harness that draws their seeds, random legal play, and the
checks made at every step.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.engine import (
    CHOOSE_TRUMP,
    EXCLUDE,
    PASS,
    ActionError,
    IllegalAction,
    MalformedAction,
    Match,
    NotYourTurn,
    new_match,
)
from cardarena.engine.events import (
    CardPlayed,
    Event,
    Passed,
    RoundScored,
    RoundStarted,
    SuitExcluded,
    TrumpChosen,
)
from cardarena.engine.fantan import FanTanRound
from cardarena.engine.sixes import SixesHand
from cardarena.engine.tricks import TrickRound
from cardarena.engine.views import Viewer, view_names

from .rules_reference import DIAMONDS, HEARTS, JOKERS, SPANISH_BASE, french, mask, spanish

MAX_STEPS = 10_000
"""Generous bound on the seat actions of one match (the longest, Triathlon to 50 deals, ~2 100)."""


# -- the configurations under test ------------------------------------------------------------

NORWEGIAN = ("pentathlon", "hexathlon", "heptathlon")
TRICK_KINDS = ("pass", "clubs", "queens", "grand", "trumps", "finale")
TRICKS_PER_PLAYER = {3: 17, 4: 13, 5: 10}
PRESET_ROUNDS: dict[str, tuple[str, ...]] = {
    "pentathlon": ("pass", "clubs", "queens", "fan_tan", "grand"),
    "hexathlon": ("pass", "clubs", "queens", "fan_tan", "grand", "trumps"),
    "heptathlon": ("pass", "clubs", "fan_tan", "queens", "grand", "trumps", "finale"),
}
PRESET_OPENERS = {"pentathlon": "seven", "hexathlon": "six_and_seven", "heptathlon": "seven"}
PRESET_TRUMP: dict[str, dict[str, str]] = {
    "pentathlon": {"mode": "random"},
    "hexathlon": {"mode": "random"},
    "heptathlon": {"mode": "fixed", "suit": "S"},
}


@dataclass(frozen=True)
class Config:
    game: str
    players: int
    options: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    """A short label for the test id (the options otherwise)."""

    def new(self, seed: bytes) -> Match:
        return new_match(
            self.game, seed=seed, players=self.players, options=copy.deepcopy(dict(self.options))
        )

    @property
    def norwegian(self) -> bool:
        return self.game in NORWEGIAN

    @property
    def lowest_wins(self) -> bool:
        return self.norwegian

    def rounds(self) -> list[dict[str, Any]]:
        """Each Norwegian round's full parameters (RULES.md §1.5, §1.6), from the raw options."""
        entries = self.options.get("rounds", PRESET_ROUNDS[self.game])
        out = []
        for entry in entries:
            item = {"type": entry} if isinstance(entry, str) else dict(entry)
            kind = item["type"]
            defaults: dict[str, Any] = {
                "multiplier": 1,
                "all_taken_zero": False,
                "points_per_queen": 4,
                "queen_of_clubs": 8,
                "trump": PRESET_TRUMP[self.game],
                "openers": PRESET_OPENERS[self.game],
                "voluntary_pass": False,
                "winner_scores_zero": True,
            }
            out.append({**defaults, **self.options.get(kind, {}), **item})
        return out

    def deck(self, kind: str) -> tuple[int, ...]:
        """The canonical (pre-shuffle) deck of a round of ``kind`` (RULES.md §1.1, §2.1, §3.1, §4)."""
        if self.game == "crazy_sixes":
            if self.options.get("deck", 48) == 48:
                ranks: Sequence[int] = range(1, 13)
            else:
                ranks = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
            return tuple(spanish(s, r) for s in range(4) for r in ranks)
        if self.game == "triathlon":
            return (*(french(s, r) for s in range(4) for r in range(6, 15)), *JOKERS)
        if kind == "fan_tan":
            return tuple(range(52))
        removed = {3: {french(DIAMONDS, 2)}, 4: set(), 5: {french(DIAMONDS, 2), french(HEARTS, 2)}}
        return tuple(c for c in range(52) if c not in removed[self.players])


def _id(config: Config) -> str:
    label = config.name or ",".join(f"{k}={v}" for k, v in sorted(config.options.items()))
    return f"{config.game}-{config.players}p" + (f"[{label}]" if label else "")


CUSTOM_PENTATHLON_ROUNDS: list[Any] = [
    "fan_tan",
    {"type": "trumps", "multiplier": 2},
    "trumps",
    {"type": "fan_tan", "openers": "six_and_seven", "voluntary_pass": True},
    "finale",
    "pass",
    "pass",
    {"type": "queens", "multiplier": 3},
    "clubs",
    "grand",
]
CUSTOM_HEXATHLON_ROUNDS: list[Any] = [
    "trumps",
    {"type": "trumps", "trump": {"mode": "fixed", "suit": "H"}},
    "fan_tan",
    {"type": "fan_tan", "openers": "seven", "winner_scores_zero": False},
    "clubs",
    "clubs",
]

PLAIN_NORWEGIAN = [Config(game, n) for game in NORWEGIAN for n in (3, 4, 5)]
VOLUNTARY_PASS_RANDOM_DEALER = Config(
    "pentathlon",
    4,
    {"fan_tan": {"voluntary_pass": True}, "first_dealer": "random"},
    name="voluntary_pass,first_dealer=random",
)
CUSTOM_PENTATHLON = Config(
    "pentathlon",
    3,
    {"rounds": CUSTOM_PENTATHLON_ROUNDS, "first_dealer": "random"},
    name="custom_rounds,first_dealer=random",
)
NORWEGIAN_CONFIGS = [
    *PLAIN_NORWEGIAN,
    VOLUNTARY_PASS_RANDOM_DEALER,
    Config(
        "hexathlon",
        3,
        {"fan_tan": {"voluntary_pass": True, "winner_scores_zero": False}, "first_dealer": 2},
        name="voluntary_pass,winner_counts_passes,first_dealer=2",
    ),
    Config(
        "heptathlon",
        5,
        {
            "fan_tan": {"openers": "six_and_seven", "voluntary_pass": True},
            "trumps": {"trump": {"mode": "random"}},
        },
        name="six_and_seven,voluntary_pass,random_trump",
    ),
    CUSTOM_PENTATHLON,
    Config(
        "hexathlon",
        5,
        {"rounds": CUSTOM_HEXATHLON_ROUNDS, "trumps": {"multiplier": 2}},
        name="custom_rounds,trumps_x2",
    ),
    Config(
        "heptathlon",
        4,
        {
            "clubs": {"all_taken_zero": True},
            "queens": {"points_per_queen": 5},
            "finale": {"queen_of_clubs": 4, "multiplier": 2},
            "fan_tan": {"multiplier": 3, "voluntary_pass": True},
            "first_dealer": 3,
        },
        name="house_options,first_dealer=3",
    ),
]
SIXES_CONFIGS = [
    Config("crazy_sixes", 3),
    Config("crazy_sixes", 4),
    Config("crazy_sixes", 3, {"deck": 40}),
    Config("crazy_sixes", 4, {"deck": 40, "first_dealer": "random"}),
    Config("crazy_sixes", 4, {"split": "floor"}),
    Config("crazy_sixes", 3, {"pool": "rivals_only", "first_dealer": 1}),
    Config("crazy_sixes", 4, {"deck": 40, "split": "floor", "pool": "rivals_only"}),
    Config("crazy_sixes", 3, {"target_score": 1}),
    Config("crazy_sixes", 4, {"target_score": 30, "first_dealer": 3}),
]
TRIATHLON_CONFIGS = [
    Config("triathlon", 3),
    Config("triathlon", 3, {"zero_is_multiple": True}),
    Config("triathlon", 3, {"end": "triathlon_in_one_deal"}),
    Config(
        "triathlon", 3, {"end": "triathlon_in_one_deal", "max_deals": 3, "first_dealer": "random"}
    ),
    Config("triathlon", 3, {"max_deals": 1, "zero_is_multiple": True}),
    Config("triathlon", 3, {"first_dealer": 2, "end": "all_feats_cumulative"}),
]
ALL_CONFIGS = [*NORWEGIAN_CONFIGS, *SIXES_CONFIGS, *TRIATHLON_CONFIGS]


def params(configs: Sequence[Config]) -> list[Any]:
    return [pytest.param(c, id=_id(c)) for c in configs]


SEEDS = st.binary(min_size=32, max_size=32)
RNG_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FEW = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MatchProperty = Callable[[Config, bytes, int], None]
"""A property test: ``(config, match seed, random player's seed) -> None``."""


def over_random_matches(
    configs: Sequence[Config], budget: settings
) -> Callable[[MatchProperty], Callable[..., None]]:
    """The harness of the property tests: run the test for each of ``configs`` (a test id
    each), on as many drawn match seeds and random player seeds as ``budget`` allows."""

    def harness(test: MatchProperty) -> Callable[..., None]:
        drawn = budget(given(seed=SEEDS, rng_seed=RNG_SEEDS)(test))
        marked: Callable[..., None] = pytest.mark.parametrize("config", params(configs))(drawn)
        return marked

    return harness


# -- random play ------------------------------------------------------------------------------


def choose(rng: random.Random, legal: Sequence[int]) -> int:
    """A random legal action; a voluntary pass half the time, so that pass streaks happen."""
    if PASS in legal and len(legal) > 1 and rng.random() < 0.5:
        return PASS
    return rng.choice(list(legal))


def play_random(match: Match, rng: random.Random) -> list[tuple[int, int]]:
    """Play to the end; return the (seat, action) pairs applied."""
    actions: list[tuple[int, int]] = []
    for _ in range(MAX_STEPS):
        if match.over:
            return actions
        seat = match.to_act
        assert seat is not None, "a match that is not over must have a seat to act"
        action = choose(rng, match.legal_actions())
        match.apply(seat, action)
        actions.append((seat, action))
    raise AssertionError(f"the match did not end within {MAX_STEPS} actions")


def rounds_of(log: Sequence[Event]) -> list[list[Event]]:
    """The log cut into rounds: from each RoundStarted to its RoundScored, inclusive."""
    out: list[list[Event]] = []
    current: list[Event] | None = None
    for event in log:
        if isinstance(event, RoundStarted):
            assert current is None, "a round started before the previous one was scored"
            current = [event]
        elif current is not None:
            current.append(event)
            if isinstance(event, RoundScored):
                out.append(current)
                current = None
    assert current is None, "the log ends inside a round"
    return out


# -- step checks ------------------------------------------------------------------------------


def check_conservation(match: Match, deck: int, deck_size: int) -> None:
    """Hands + everything on the table partition the round's deck (RULES.md §1.1, §2.1, §3.1)."""
    rnd = match.round
    assert rnd is not None
    parts: list[int] = list(rnd.hands)
    if isinstance(rnd, TrickRound):
        parts += [mask(rnd.trick), *rnd.taken]
    elif isinstance(rnd, FanTanRound):
        parts.append(rnd.table_mask)
    elif isinstance(rnd, SixesHand):
        parts += [rnd.table_mask, *rnd.dead]
    else:  # pragma: no cover - a new round core needs its own partition here
        raise AssertionError(f"unknown round core {type(rnd).__name__}")
    union = 0
    for part in parts:
        union |= part
    assert union == deck, "a card of the deck is missing, or a foreign card appeared"
    assert sum(p.bit_count() for p in parts) == deck_size, "a card is in two places at once"


def expected_error(config: Config, deck: int, action: int) -> type[ActionError]:
    """Which refusal an action not in legal_actions deserves."""
    is_card = 0 <= action <= 54 or SPANISH_BASE <= action <= SPANISH_BASE + 47
    is_action = is_card or action == PASS or EXCLUDE <= action <= CHOOSE_TRUMP + 3
    if not is_action or (is_card and not deck >> action & 1):
        return MalformedAction
    return IllegalAction


PROBES = (*range(-2, 134), 200, 1000, 10**6)


def probe_refusals(
    match: Match, config: Config, deck: int, rng: random.Random, count: int | None
) -> None:
    """Actions outside legal_actions (``count`` of them at random, or all of them) and wrong
    seats are refused with the right ActionError subclass; the match is unchanged."""
    seat = match.to_act
    assert seat is not None
    legal = match.legal_actions()
    assert match.round is not None
    before = (len(match.log), match.log[-3:], seat, legal, list(match.round.hands))
    excluded = set(legal)
    if any(a in JOKERS for a in legal):
        excluded |= set(JOKERS)  # "a Joker" is one action: any Joker id stands for it
    candidates = [a for a in PROBES if a not in excluded]
    probes: list[tuple[int, int, type[ActionError]]] = [
        (seat, a, expected_error(config, deck, a))
        for a in (candidates if count is None else rng.sample(candidates, count))
    ]
    probes.append(
        ((seat + rng.randrange(1, config.players)) % config.players, legal[0], NotYourTurn)
    )
    probes.append((rng.choice([-1, config.players]), legal[0], MalformedAction))
    for who, action, error in probes:
        with pytest.raises(ActionError) as info:
            match.apply(who, action)
        assert type(info.value) is error, (
            f"seat {who} action {action}: {info.value!r}, expected {error}"
        )
        assert str(info.value), "a refusal explains itself"
        after = (
            len(match.log),
            match.log[-3:],
            match.to_act,
            match.legal_actions(),
            list(match.round.hands),
        )
        assert after == before, "a refused action changed the match"


def action_event(event: Event, *, voluntary: bool) -> int | None:
    """The seat action an event records (None for chance and derived events); ``voluntary``:
    the event's round allows voluntary passes, so that every pass in it, forced or not, was
    asked of its seat (RULES.md, "Forced pass")."""
    if isinstance(event, CardPlayed):
        return event.card
    if isinstance(event, Passed) and (event.forced is False or voluntary):
        return PASS
    if isinstance(event, SuitExcluded):
        return EXCLUDE + event.suit
    if isinstance(event, TrumpChosen):
        return CHOOSE_TRUMP + event.suit
    return None


def numbered_by(match: Match, viewer: Viewer) -> dict[int, int]:
    """Every Joker -> the id ``viewer`` knows it by now: a Joker it has seen under its own
    number for it (docs/rules.md §3.3), one it has not under a number it has not given (so
    the real hands, renamed, are a deal consistent with what it saw)."""
    names = dict(view_names(match, viewer))
    free = iter(sorted(set(JOKERS) - set(names.values())))
    names |= {card: next(free) for card in JOKERS if card not in names}
    return names
