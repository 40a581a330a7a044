"""Crazy Sixes with the Spanish deck (RULES.md §2): hands until a total reaches the target."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, partial
from typing import Any

from .decks import spanish_deck
from .events import Event, Score
from .exact import reached
from .options import ChoiceSpec, IntSpec, ObjectSpec, SeatSpec
from .schedule import GameSpec, Round, RoundPlan
from .sixes import SIXES_LAYOUT, SixesHand
from .traits import RoundTraits

OPTIONS = ObjectSpec(
    {
        "deck": ChoiceSpec(48, (48, 40), "48 cards (ranks 1-12) or 40 (without 8 and 9)"),
        "target_score": IntSpec(
            100, 1, 10_000, description="the game ends after the hand in which a total reaches this"
        ),
        "split": ChoiceSpec(
            "exact",
            ("exact", "floor"),
            "exact: winners share the pool as fractions; floor: remainder dropped",
        ),
        "pool": ChoiceSpec(
            "all_unplaced",
            ("all_unplaced", "rivals_only"),
            "what the hand's winners share: every unplaced card, or only the non-winners' dead cards",
        ),
        "first_dealer": SeatSpec(0, 'seat of the first dealer, or "random"'),
    }
)


KIND = "hand"


def round_traits(options: Mapping[str, Any], players: int, index: int) -> RoundTraits:
    """Every hand: the Spanish deck the options choose, played onto the Crazy Sixes layout."""
    return _hand_traits(options["deck"])


@cache
def _hand_traits(deck_size: int) -> RoundTraits:
    return RoundTraits(KIND, spanish_deck(deck_size), layout=SIXES_LAYOUT)


def kind_traits(kind: str, options: Mapping[str, Any], players: int) -> RoundTraits:
    return round_traits(options, players, 0)


@cache
def hand_plans(
    players: int, deck_size: int, split: str, pool: str
) -> tuple[RoundPlan, tuple[RoundPlan, ...]]:
    """The plan of a match's first hand (the holder of 6O starts) and, by seat, of a hand that
    seat starts: made once for each configuration and shared by its matches, as every hand
    of every match needs one and a plan never changes."""
    traits = _hand_traits(deck_size)
    hand = partial(SixesHand, players, traits.deck_mask, split, pool)
    return RoundPlan(traits, partial(hand, None)), tuple(
        [RoundPlan(traits, partial(hand, seat)) for seat in range(players)]
    )


class CrazySixesSchedule:
    def __init__(self, options: Mapping[str, Any], players: int) -> None:
        self.players = players
        self.traits = round_traits(options, players, 0)
        self.mask = self.traits.deck_mask
        self.target = options["target_score"]
        self.split = options["split"]
        self.pool = options["pool"]
        self.first_plan, self.plans = hand_plans(players, options["deck"], self.split, self.pool)

    def next_round(
        self, index: int, totals: tuple[Score, ...], previous: Round | None
    ) -> RoundPlan | None:
        if index > 0 and reached(totals, self.target):
            return None
        if isinstance(previous, SixesHand):
            return self.plans[(previous.starter + 1) % self.players]
        return self.first_plan

    def score(
        self, index: int, played: Round, plan: RoundPlan
    ) -> tuple[tuple[Score, ...], list[Event]]:
        return played.scores(), []

    def copy(self) -> CrazySixesSchedule:
        """Itself: it keeps only the options (the next starter comes from the last hand)."""
        return self


GAME = GameSpec(
    name="crazy_sixes",
    title="Crazy Sixes (seises cabrón)",
    summary="Spanish-deck layout game: open suits with sixes, skip gaps, place the most cards. Highest total wins.",
    players=(3, 4),
    lowest_wins=False,
    options=OPTIONS,
    make_schedule=CrazySixesSchedule,
    kinds=(KIND,),
    round_traits=round_traits,
    kind_traits=kind_traits,
)
