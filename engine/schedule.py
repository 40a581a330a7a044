"""What a game is, as data: a schedule of rounds, a winner rule and an options schema.

A :class:`GameSpec` is looked up by name in the registry (:mod:`games`). For each match it
makes a :class:`Schedule`, which says which round comes next (or that the match is over) and
how a finished round scores. The rounds themselves are the reusable cores: :mod:`tricks`,
:mod:`fantan` and :mod:`sixes`; what each round is, as data, is its :class:`RoundTraits`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from .cards import Card
from .events import Event, Score
from .options import ObjectSpec
from .traits import RoundTraits, Trump

DRAWN = Trump.DRAWN


class Round(Protocol):
    """The uniform face of every round core."""

    players: int
    hands: list[int]
    to_act: int | None
    finished: bool
    legal: int
    """The legal mask of the seat to act, kept current by every change (0: nobody to act)."""
    legal_cards: tuple[int, ...] | None
    """The same actions as a sorted tuple when the round has them at hand, else None."""

    def start(self, out: list[Event]) -> None: ...
    def copy(self) -> Round:
        """An independent copy to play on (:meth:`Match.clone`): its own hands, tricks and
        table, whatever the round does not change (a scorer, a layout) shared."""
        ...

    def legal_mask(self) -> int: ...
    def forget_legal(self) -> None: ...
    def why_illegal(self, action: int) -> str: ...
    def normalize(self, action: int) -> int: ...
    def play(self, action: int, out: list[Event]) -> None: ...
    def scores(self) -> tuple[Score, ...]: ...
    def table(self) -> dict[str, Any]: ...


RoundBuilder = Callable[[tuple[int, ...], int, int], Round]
"""``(hands, dealer, trump) -> round``; ``trump`` is -1 when the round has none (yet)."""


class RoundPlan(NamedTuple):
    """What the next round is: its traits (kind, deck, trump, ...), how to build it, and its
    multiplier.

    Immutable; a named tuple rather than a frozen dataclass because one is made per round
    and a tuple costs a fraction of a frozen dataclass to build."""

    traits: RoundTraits
    build: RoundBuilder
    multiplier: int = 1

    @property
    def kind(self) -> str:
        return self.traits.kind

    @property
    def deck(self) -> tuple[Card, ...]:
        return self.traits.deck

    @property
    def trump(self) -> int | None:
        """The trump suit when the options fix it, public from the start."""
        return self.traits.trump_suit

    @property
    def draw_trump(self) -> bool:
        return self.traits.trump is DRAWN

    @property
    def voluntary_pass(self) -> bool:
        return self.traits.voluntary_pass


TraitsOf = Callable[[Mapping[str, Any], int, int], RoundTraits]
KindTraitsOf = Callable[[str, Mapping[str, Any], int], RoundTraits]


class Schedule(Protocol):
    """One match's sequence of rounds; may keep state across rounds (starter, feats)."""

    def next_round(
        self, index: int, totals: tuple[Score, ...], previous: Round | None
    ) -> RoundPlan | None: ...

    def score(
        self, index: int, played: Round, plan: RoundPlan
    ) -> tuple[tuple[Score, ...], list[Event]]: ...

    def copy(self) -> Schedule:
        """An independent copy for a cloned match (:meth:`Match.clone`): the schedule itself
        when it keeps nothing that play changes."""
        ...


@dataclass(frozen=True)
class GameSpec:
    name: str
    title: str
    summary: str
    players: tuple[int, ...]
    lowest_wins: bool
    options: ObjectSpec
    make_schedule: Callable[[Mapping[str, Any], int], Schedule]
    kinds: tuple[str, ...]
    """Every kind of round this game can play (``RoundStarted.kind``)."""
    round_traits: TraitsOf
    """``(normalised options, players, round index) -> that round's traits``; the schedule
    plays its rounds from the same traits."""
    kind_traits: KindTraitsOf
    """``(kind, normalised options, players) -> the traits of a round of that kind`` without
    a round's own overrides (what a kind is, for those who know only its name)."""

    @property
    def default_players(self) -> int:
        return 4 if 4 in self.players else self.players[0]


def multiplied(scores: tuple[Score, ...], multiplier: int) -> tuple[Score, ...]:
    return scores if multiplier == 1 else tuple([s * multiplier for s in scores])


def best_seats(totals: tuple[Score, ...], *, lowest_wins: bool) -> tuple[int, ...]:
    """Every seat tied on the winning total is a joint winner."""
    best = min(totals) if lowest_wins else max(totals)
    return tuple(seat for seat, total in enumerate(totals) if total == best)
