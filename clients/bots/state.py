"""What one seat knows, folded from its own event stream: the whole input of a bot.

A seat's stream carries its own hand in each deal, every public play, and the server's
prompts. :class:`SeatState` folds those events into a table a bot can read (hand, trick,
layout, scores, what each rival has shown) without any rules: results such as trick winners,
dead cards and scores are events themselves. The legal actions come from the server. What
kind of round is being played (its deck, tricks or a layout, what a void shows) is the round's
``traits``, looked up once from the engine's registry when the round starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from cardarena.engine import events as ev
from cardarena.engine.actions import PASS
from cardarena.engine.cards import SUIT_MASKS
from cardarena.engine.errors import EngineError
from cardarena.engine.games import round_traits
from cardarena.engine.traits import UNKNOWN_ROUND, RoundTraits
from cardarena.engine.tricks import void_shown
from cardarena.v1.clocks import SeatClocks, TimeControl

if TYPE_CHECKING:
    from cardarena.v1 import game_pb2 as pb


@dataclass
class SeatState:
    """One seat's knowledge of a match. Card sets are int masks (see ``cardarena.engine.cards``)."""

    match_id: str
    seat: int
    game: str = ""
    players: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    events: list[ev.Event] = field(default_factory=list)
    round: int = -1
    kind: str = ""
    traits: RoundTraits = UNKNOWN_ROUND
    """What the current round is (deck, layout or tricks, trump, scoring), from the registry."""
    dealer: int = 0
    trump: int | None = None
    voluntary_pass: bool = False
    hand: int = 0
    hand_sizes: list[int] = field(default_factory=list)
    trick_leader: int | None = None
    trick: list[tuple[int, int]] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=list)
    taken: list[int] = field(default_factory=list)
    excluded_suits: list[int] = field(default_factory=list)
    table: int = 0
    passes: list[int] = field(default_factory=list)
    dead: list[int] = field(default_factory=list)
    placed: list[int] = field(default_factory=list)
    played: list[int] = field(default_factory=list)
    """Cards each seat has played this round."""
    void: list[int] = field(default_factory=list)
    """Suits each seat has shown it lacks this round (a mask of suit bits), from failing to follow."""
    totals: list[int | Fraction] = field(default_factory=list)
    round_scores: list[tuple[int | Fraction, ...]] = field(default_factory=list)
    over: bool = False
    winners: tuple[int, ...] = ()
    legal: list[int] = field(default_factory=list)
    """The legal actions when this seat is to act (from the server), else empty."""
    to_act: int | None = None
    """The seat to act, any seat (``None``: nobody), as the server last said (its ``Turn``
    messages, and the snapshot a stream opens with); events alone do not always tell."""
    deadline_unix_ms: int = 0
    """When the clock plays for the seat to act, Unix ms (0: no clock), with ``to_act``."""
    time_control: TimeControl = field(default_factory=TimeControl)
    """The match's clocks, as its MatchStarted states them (``move_ms``, ``bank_ms``,
    ``increment_ms``, ``round_ms``; 0: that clock is off)."""
    bank_ms: list[int] = field(default_factory=list)
    """What each seat has left of its bank, ms, as the server folds it from the log (empty
    without a bank): this seat's as its turn starts is ``bank_ms[seat]``."""
    round_ms: list[int] = field(default_factory=list)
    """What each seat has left of its budget for this round, ms (empty without one)."""
    seed: bytes = b""
    _clocks: SeatClocks | None = None

    def note_turn(self, seat: int | None, deadline_unix_ms: int) -> None:
        """The server says ``seat`` is to act (``None``: nobody) until ``deadline_unix_ms``."""
        self.to_act, self.deadline_unix_ms = seat, deadline_unix_ms

    def note_clocks(self, entry: pb.Event) -> None:
        """Fold a log entry's part in the clocks (docs/protocol.md, "Clocks"): a MatchStarted
        sets them, a RoundStarted renews the round budgets, an entry with ``think_ms`` charges
        its seat, exactly as the server folds them (:class:`cardarena.v1.clocks.SeatClocks`)."""
        if entry.WhichOneof("kind") == "match_started":
            started = entry.match_started
            self.time_control = TimeControl.of_message(started)
            control = self.time_control
            timed = control.bank_ms or control.round_ms
            self._clocks = SeatClocks(control, started.players) if timed else None
        clocks = self._clocks
        if clocks is None:
            return
        clocks.fold(entry)
        self.bank_ms = list(clocks.bank) if clocks.control.bank_ms else []
        self.round_ms = list(clocks.round) if clocks.control.round_ms else []

    def observe(self, event: ev.Event) -> None:
        """Fold one event (as this seat may see it) into the state."""
        self.events.append(event)
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    @property
    def unseen(self) -> int:
        """Cards of this round that this seat has not seen: in rivals' hands, wherever they are."""
        seen = self.hand | self.table | self.dead_all
        for cards in self.played:
            seen |= cards
        return self._round_deck & ~seen

    @property
    def dead_all(self) -> int:
        out = 0
        for cards in self.dead:
            out |= cards
        return out

    # -- folds ---------------------------------------------------------------------------

    _round_deck: int = 0

    def _on_MatchStarted(self, event: ev.MatchStarted) -> None:  # noqa: N802
        self.game, self.players, self.options = event.game, event.players, dict(event.options)
        self.totals = [0] * event.players

    def _on_RoundStarted(self, event: ev.RoundStarted) -> None:  # noqa: N802
        n = self.players
        self.round, self.kind, self.dealer = event.round, event.kind, event.dealer
        self.traits = _traits_of(self.game, n, self.options, event.round)
        self.trump, self.voluntary_pass = event.trump, event.voluntary_pass
        self.hand, self.hand_sizes = 0, [0] * n
        self.trick_leader, self.trick = None, []
        self.tricks_won, self.taken = [0] * n, [0] * n
        self.excluded_suits, self.table = [], 0
        self.passes, self.dead, self.placed = [0] * n, [0] * n, [0] * n
        self.played, self.void = [0] * n, [0] * n
        self.legal = []

    def _on_TrumpDrawn(self, event: ev.TrumpDrawn) -> None:  # noqa: N802
        self.trump = event.suit

    def _on_Dealt(self, event: ev.Dealt) -> None:  # noqa: N802
        mine = event.hands[self.seat]
        self.hand = mine.mask if mine is not None else 0
        self.hand_sizes = list(event.hand_sizes)
        self._round_deck = 0
        for hand in event.hands:
            if hand is not None:
                self._round_deck |= hand.mask
        self._round_deck |= self.traits.deck_mask

    def _on_SuitExcluded(self, event: ev.SuitExcluded) -> None:  # noqa: N802
        self.excluded_suits.append(event.suit)

    def _on_TrumpChosen(self, event: ev.TrumpChosen) -> None:  # noqa: N802
        self.trump = event.suit

    def _on_CardPlayed(self, event: ev.CardPlayed) -> None:  # noqa: N802
        seat, card = event.seat, event.card
        bit = 1 << card
        if seat == self.seat:
            self.hand &= ~bit
        self.hand_sizes[seat] -= 1
        self.played[seat] |= bit
        self.placed[seat] += 1
        if self.traits.layout is not None:
            self.table |= bit
            return
        if not self.trick:
            self.trick_leader = seat
        else:
            # A Joker answers a led suit only from a hand without it (RULES.md, Triathlon),
            # so it shows a void as plainly as a card of another suit does.
            void = void_shown(self.trick[0][1], card)
            if void >= 0:
                self.void[seat] |= 1 << void
        self.trick.append((seat, card))

    def _on_Passed(self, event: ev.Passed) -> None:  # noqa: N802
        self.passes[event.seat] += 1

    def _on_TrickWon(self, event: ev.TrickWon) -> None:  # noqa: N802
        self.tricks_won[event.seat] += 1
        for card in event.cards:
            self.taken[event.seat] |= 1 << card
        self.trick, self.trick_leader = [], event.seat

    def _on_CardsDead(self, event: ev.CardsDead) -> None:  # noqa: N802
        self.dead[event.seat] |= event.cards.mask
        if event.seat == self.seat:
            self.hand &= ~event.cards.mask
        self.hand_sizes[event.seat] -= len(event.cards)

    def _on_RoundScored(self, event: ev.RoundScored) -> None:  # noqa: N802
        self.round_scores.append(event.scores)
        self.totals = list(event.totals)

    def _on_MatchEnded(self, event: ev.MatchEnded) -> None:  # noqa: N802
        self.over, self.winners, self.totals = True, event.winners, list(event.totals)
        self.legal = []

    def suit_cards(self, suit: int) -> int:
        """This seat's cards of ``suit``."""
        return self.hand & SUIT_MASKS[suit]

    @property
    def can_pass(self) -> bool:
        return PASS in self.legal


def _traits_of(game: str, players: int, options: dict[str, Any], index: int) -> RoundTraits:
    """The round's traits; those of an unknown round when no (valid) ``MatchStarted`` was seen."""
    try:
        return round_traits(game, players, options, index)
    except (EngineError, LookupError, TypeError):
        return UNKNOWN_ROUND
