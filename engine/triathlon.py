"""David Parlett's Triathlon (RULES.md §3): deals until the feats say the game is over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .copies import fill
from .decks import TRIATHLON_39
from .events import Event, FeatsEarned, Score
from .options import BoolSpec, ChoiceSpec, IntSpec, ObjectSpec, SeatSpec
from .schedule import GameSpec, Round, RoundPlan
from .traits import RoundTraits, TrickScoring, Trump
from .tricks import TrickRound

MULTIPLE, LAST, MIDDLE = "multiple", "last", "middle"

OPTIONS = ObjectSpec(
    {
        "zero_is_multiple": BoolSpec(False, "true: taking no tricks counts as a multiple of three"),
        "end": ChoiceSpec(
            "all_feats_cumulative",
            ("all_feats_cumulative", "triathlon_in_one_deal"),
            "end after a player has earned every feat over the deals, or all three in one deal",
        ),
        "max_deals": IntSpec(
            50, 1, 1000, description="the game ends after this many deals whatever the feats"
        ),
        "first_dealer": SeatSpec(0, 'seat of the first dealer, or "random"'),
    }
)


def feats(
    tricks: Sequence[int], last_winner: int, *, zero_is_multiple: bool = False
) -> list[set[str]]:
    """Which of F1 (multiple of three), F2 (last trick), F3 (middle) each player earned."""
    multiples = {3, 6, 9, 12} | ({0} if zero_is_multiple else set())
    out: list[set[str]] = [set() for _ in tricks]
    for seat, t in enumerate(tricks):
        if t in multiples:
            out[seat].add(MULTIPLE)
    out[last_winner].add(LAST)
    out[middle_player(tricks)].add(MIDDLE)
    return out


def middle_player(tricks: Sequence[int]) -> int:
    """The middle count if all differ, else the odd one out (13 never splits three ways)."""
    a, b, c = tricks
    if a == b:
        return 2
    if a == c:
        return 1
    if b == c:
        return 0
    return sorted(range(3), key=lambda seat: tricks[seat])[1]


def deal_scores(tricks: Sequence[int], earned: Sequence[set[str]]) -> tuple[Score, ...]:
    """``t + 10·F1 + 10·F2 + B·F3 + 100·(all three)``, ``B`` 20 when nobody earned F1."""
    middle_bonus = 10 if any(MULTIPLE in f for f in earned) else 20
    return tuple(
        (
            t
            + (10 if MULTIPLE in f else 0)
            + (10 if LAST in f else 0)
            + (middle_bonus if MIDDLE in f else 0)
            + (100 if len(f) == 3 else 0)
        )
        for t, f in zip(tricks, earned, strict=True)
    )


DEAL = RoundTraits(
    "deal",
    TRIATHLON_39,
    trump=Trump.CHOSEN,
    scoring=TrickScoring.of(1, feats=True),
)
"""Every Triathlon deal: 39 cards with the Jokers, trump chosen by the seats, feats scored."""


def round_traits(options: Mapping[str, Any], players: int, index: int) -> RoundTraits:
    return DEAL


def kind_traits(kind: str, options: Mapping[str, Any], players: int) -> RoundTraits:
    return DEAL


def _no_scorer(_: TrickRound) -> list[int]:
    raise AssertionError("Triathlon deals are scored by the schedule, which sees the feats")


TRIATHLON_SHARED = ("zero_is_multiple", "end", "max_deals", "triathlon_in_one_deal")
"""What :meth:`TriathlonSchedule.copy` shares (the feats, ``ever``, it copies)."""


class TriathlonSchedule:
    def __init__(self, options: Mapping[str, Any], players: int) -> None:
        self.zero_is_multiple: bool = options["zero_is_multiple"]
        self.end: str = options["end"]
        self.max_deals: int = options["max_deals"]
        self.ever: list[set[str]] = [set() for _ in range(players)]
        self.triathlon_in_one_deal = False

    def __new__(cls, *args: object, **kwargs: object) -> TriathlonSchedule:
        """``TriathlonSchedule.__new__(TriathlonSchedule)``: an empty schedule for :meth:`copy`
        to fill, also in the compiled build, whose own ``__new__`` would run ``__init__`` (see
        :mod:`.copies`)."""
        return super().__new__(cls)

    def copy(self) -> TriathlonSchedule:
        """An independent copy: the feats earned so far (a set per seat) copied."""
        new = fill(TriathlonSchedule.__new__(TriathlonSchedule), self, TRIATHLON_SHARED, ())
        new.ever = [set(feats) for feats in self.ever]  # a set per seat: copied two deep
        return new

    def next_round(
        self, index: int, totals: tuple[Score, ...], previous: Round | None
    ) -> RoundPlan | None:
        if index >= self.max_deals:
            return None
        if self.end == "all_feats_cumulative" and any(len(f) == 3 for f in self.ever):
            return None
        if self.end == "triathlon_in_one_deal" and self.triathlon_in_one_deal:
            return None
        return RoundPlan(DEAL, _build)

    def score(
        self, index: int, played: Round, plan: RoundPlan
    ) -> tuple[tuple[Score, ...], list[Event]]:
        assert isinstance(played, TrickRound)
        earned = feats(played.tricks, played.last_winner, zero_is_multiple=self.zero_is_multiple)
        for seat, f in enumerate(earned):
            self.ever[seat] |= f
        self.triathlon_in_one_deal = any(len(f) == 3 for f in earned)
        event = FeatsEarned(index, tuple(tuple(sorted(f)) for f in earned))
        return deal_scores(played.tricks, earned), [event]


def _build(hands: tuple[int, ...], dealer: int, trump: int) -> Round:
    return TrickRound(3, hands, dealer, _no_scorer, auction=DEAL.trump is Trump.CHOSEN)


GAME = GameSpec(
    name="triathlon",
    title="Triathlon (David Parlett)",
    summary="Three-player trick game with Jokers and three feats; highest total wins.",
    players=(3,),
    lowest_wins=False,
    options=OPTIONS,
    make_schedule=TriathlonSchedule,
    kinds=(DEAL.kind,),
    round_traits=round_traits,
    kind_traits=kind_traits,
)
