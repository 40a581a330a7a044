"""Everything that happens in a match, as immutable records.

A match log is the sequence of these events. Three sources produce them:

* ``chance``: the deal and every random draw, which come from the seed (or, on replay, from
  the log itself, so a replay never trusts a random generator);
* ``action``: what a seat chose to do;
* ``derived``: what the rules make of the above (forced passes, except where passes may be
  voluntary; trick winners, dead cards, scores, the end). On replay these are recomputed and
  must match the record.

An event's ``source`` says which, from its base (:class:`FromChance`, :class:`FromAction`,
:class:`Derived`); a :class:`Passed` is the one event whose source depends on a field.

Hands travel as :class:`~cardarena.engine.cards.CardSet`; a view for a seat or a spectator
replaces the hands it may not see with ``None`` (see :mod:`views`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Literal

from .cards import MAX_CARD, CardSet

Source = Literal["chance", "action", "derived"]
Score = int | Fraction
"""Scores are whole numbers, except where Crazy Sixes shares a pool exactly."""


class FromChance:
    """An event of chance: the deal or a random draw (a replay reads it off the log)."""

    __slots__ = ()
    source: ClassVar[Source] = "chance"


class FromAction:
    """An event a seat chose (a replay applies it as the seat's action)."""

    __slots__ = ()
    source: ClassVar[Source] = "action"


class Derived:
    """An event the rules make of the others: a replay recomputes it and checks the record."""

    __slots__ = ()
    source: ClassVar[Source] = "derived"


@dataclass(frozen=True, slots=True)
class MatchStarted(Derived):
    """The match's identity: game, player count, fully normalised options, seed commitment.

    The first event of every log; ``commitment`` is the seed's hash, published at creation and
    checked against the seed at the end (:func:`~cardarena.engine.fairdeal.commitment`).
    """

    game: str
    players: int
    options: Any
    commitment: str


@dataclass(frozen=True, slots=True)
class DealerDrawn(FromChance):
    """The first dealer, drawn with label ``dealer`` when ``first_dealer`` is ``"random"``."""

    seat: int


@dataclass(frozen=True, slots=True)
class RoundStarted(Derived):
    """Round (deal, hand) ``round`` begins; ``trump`` is set here only when it is fixed.

    ``voluntary_pass`` says whether a seat may pass while able to play (Fan Tan option).
    """

    round: int
    kind: str
    dealer: int
    trump: int | None
    multiplier: int
    voluntary_pass: bool


@dataclass(frozen=True, slots=True)
class TrumpDrawn(FromChance):
    """A random trump suit for round ``round``, drawn with label ``trump/<round>`` before its
    deal (a round whose trump is drawn, not fixed: its ``RoundStarted.trump`` is ``None``)."""

    round: int
    suit: int


@dataclass(frozen=True, slots=True)
class Dealt(FromChance):
    """The hands of round ``round``, shuffled with label ``deal/<round>``.

    ``hand_sizes`` are public; in a view, each hand the viewer may not see is ``None``.
    """

    round: int
    hands: tuple[CardSet | None, ...]
    hand_sizes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SuitExcluded(FromAction):
    """Triathlon's trump choice: ``seat`` (D+1, then D+2) names ``suit`` as not trump."""

    seat: int
    suit: int


@dataclass(frozen=True, slots=True)
class TrumpChosen(FromAction):
    """Triathlon's trump choice, its last step: the dealer (``seat``) makes ``suit`` trump,
    one of the two suits nobody excluded."""

    seat: int
    suit: int


@dataclass(frozen=True, slots=True)
class CardPlayed(FromAction):
    """``seat`` puts ``card`` down: into the trick, or onto the layout (Fan Tan, Crazy Sixes)."""

    seat: int
    card: int


@dataclass(frozen=True, slots=True)
class Passed:
    """A pass; ``forced`` when it was the seat's only legal action (no card it could play).

    A forced pass is applied automatically (derived), except in a round where voluntary passes
    are allowed: there the seat is asked like any other and its pass, forced or not, is its own
    action (RULES.md, "Forced pass"; see :func:`~cardarena.engine.match.action_of`). In a view
    of such a round ``forced`` is ``None``: whether a seat could have played is hidden there.
    """

    seat: int
    forced: bool | None

    @property
    def source(self) -> Source:
        """As far as the event alone can tell: a forced pass of a round with voluntary passes
        is an action all the same (only its round says so)."""
        return "derived" if self.forced else "action"


@dataclass(frozen=True, slots=True)
class TrickWon(Derived):
    """Trick number ``trick`` (0-based) with its ``cards`` in play order, led by ``leader``
    and won by ``seat``."""

    trick: int
    leader: int
    cards: tuple[int, ...]
    seat: int


@dataclass(frozen=True, slots=True)
class CardsDead(Derived):
    """Crazy Sixes: cards that can never be played, laid face up in ``seat``'s dead pile.

    A card is dead once the table holds cards of its suit on both sides of it; each holder's
    newly dead cards are one event, after the card that killed them."""

    seat: int
    cards: CardSet


@dataclass(frozen=True, slots=True)
class FeatsEarned(Derived):
    """Triathlon: the feats (``multiple``, ``last``, ``middle``) each seat earned this deal."""

    round: int
    feats: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class RoundScored(Derived):
    """Round ``round`` is over: each seat's ``scores`` for it (its multiplier applied) and its
    ``totals`` so far."""

    round: int
    scores: tuple[Score, ...]
    totals: tuple[Score, ...]


@dataclass(frozen=True, slots=True)
class MatchEnded(Derived):
    """The last event: the final ``totals`` and the ``winners``, every seat tied on the best
    total."""

    totals: tuple[Score, ...]
    winners: tuple[int, ...]


Event = (
    MatchStarted
    | DealerDrawn
    | RoundStarted
    | TrumpDrawn
    | Dealt
    | SuitExcluded
    | TrumpChosen
    | CardPlayed
    | Passed
    | TrickWon
    | CardsDead
    | FeatsEarned
    | RoundScored
    | MatchEnded
)


# -- shared instances for the hot path --------------------------------------------------------

MAX_SEATS = 8
"""More seats than any game has: the shared event tables below cover seats ``0..MAX_SEATS-1``."""

CARD_PLAYED: tuple[tuple[CardPlayed, ...], ...] = tuple(
    tuple(CardPlayed(seat, card) for card in range(MAX_CARD + 1)) for seat in range(MAX_SEATS)
)
"""Every possible ``CardPlayed``, as ``CARD_PLAYED[seat][card]``.

Why: building a frozen dataclass costs more than the rest of a card play. An event is
immutable and compared by value, so one shared instance per ``(seat, card)`` is
indistinguishable from a fresh one, and the rounds look their events up here instead.
"""

ONE_CARD_DEAD: tuple[tuple[CardsDead, ...], ...] = tuple(
    tuple(CardsDead(seat, CardSet(1 << card)) for card in range(MAX_CARD + 1))
    for seat in range(MAX_SEATS)
)
"""Every ``CardsDead`` of a single card, as ``ONE_CARD_DEAD[seat][card]``; most are of one."""

PASSED: tuple[tuple[Passed, ...], tuple[Passed, ...]] = (
    tuple(Passed(seat, False) for seat in range(MAX_SEATS)),
    tuple(Passed(seat, True) for seat in range(MAX_SEATS)),
)
"""Every ``Passed``, as ``PASSED[forced][seat]``; shared, as the tables above, because building
an event costs more than looking one up."""


def check_players(players: int) -> int:
    """``players``, once a round has checked that the tables above cover each of its seats."""
    if not 0 < players <= MAX_SEATS:
        raise ValueError(f"a round seats 1..{MAX_SEATS} players, not {players}")
    return players


_SET_TRICK_WON = tuple(
    TrickWon.__dict__[name].__set__ for name in ("trick", "leader", "cards", "seat")
)


def trick_won(trick: int, leader: int, cards: tuple[int, ...], seat: int) -> TrickWon:
    """``TrickWon(trick, leader, cards, seat)`` for about half the cost: one ends every trick.

    The frozen dataclass's ``__init__`` stores each field through ``object.__setattr__``,
    which looks up the field's slot and stores through it; this stores through the slots
    directly. The event is the same (tests/engine/test_engine_fastpaths.py compares them).
    """
    event = object.__new__(TrickWon)
    set_trick, set_leader, set_cards, set_seat = _SET_TRICK_WON
    set_trick(event, trick)
    set_leader(event, leader)
    set_cards(event, cards)
    set_seat(event, seat)
    return event


_SET_ROUND_STARTED = tuple(
    RoundStarted.__dict__[name].__set__
    for name in ("round", "kind", "dealer", "trump", "multiplier", "voluntary_pass")
)
_SET_DEALT = tuple(Dealt.__dict__[name].__set__ for name in ("round", "hands", "hand_sizes"))
_SET_ROUND_SCORED = tuple(
    RoundScored.__dict__[name].__set__ for name in ("round", "scores", "totals")
)


def round_started(
    round: int, kind: str, dealer: int, trump: int | None, multiplier: int, voluntary_pass: bool
) -> RoundStarted:
    """``RoundStarted(...)`` stored slot by slot, as :func:`trick_won`: one starts every round
    (a Crazy Sixes hand is about 25 actions)."""
    event = object.__new__(RoundStarted)
    set_round, set_kind, set_dealer, set_trump, set_multiplier, set_voluntary = _SET_ROUND_STARTED
    set_round(event, round)
    set_kind(event, kind)
    set_dealer(event, dealer)
    set_trump(event, trump)
    set_multiplier(event, multiplier)
    set_voluntary(event, voluntary_pass)
    return event


def dealt(round: int, hands: tuple[CardSet | None, ...], hand_sizes: tuple[int, ...]) -> Dealt:
    """``Dealt(round, hands, hand_sizes)`` stored slot by slot, as :func:`round_started`."""
    event = object.__new__(Dealt)
    set_round, set_hands, set_sizes = _SET_DEALT
    set_round(event, round)
    set_hands(event, hands)
    set_sizes(event, hand_sizes)
    return event


def round_scored(round: int, scores: tuple[Score, ...], totals: tuple[Score, ...]) -> RoundScored:
    """``RoundScored(round, scores, totals)`` stored slot by slot, as :func:`round_started`."""
    event = object.__new__(RoundScored)
    set_round, set_scores, set_totals = _SET_ROUND_SCORED
    set_round(event, round)
    set_scores(event, scores)
    set_totals(event, totals)
    return event


def cards_dead(seat: int, cards: int) -> CardsDead:
    """``CardsDead(seat, CardSet(cards))``, shared from ``ONE_CARD_DEAD`` for a single card."""
    if cards & (cards - 1):
        return CardsDead(seat, CardSet(cards))
    return ONE_CARD_DEAD[seat][cards.bit_length() - 1]
