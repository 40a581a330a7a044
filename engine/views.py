"""What each reader may see: a seat, a spectator, or an auditor after the match.

This module is the only way hidden cards leave the engine, and its two rules below
(:func:`can_see` for hands, :func:`sees_pass_reason` for why a seat passed) are the only
place that decides what a reader sees: the engine's :class:`Projector` applies them to
engine events, and the server's stream (``cardarena.v1.codec.project_pb``) applies the same
two functions to the log entries it sends, so the two paths cannot disagree. A seat sees its
own hand and the public table; a spectator sees no hand at all; an auditor sees everything.
Seats and spectators see the Jokers under their own numbers (:mod:`.jokers`), never the
engine's, which would tell who holds which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from .cards import JOKER_MASK, JOKERS, CardSet, cards_of
from .events import CardPlayed, Dealt, Event, Passed, RoundStarted, Score, TrickWon
from .jokers import NO_NAMES, joker_names, renamed, renamed_mask, round_names
from .match import Match
from .tricks import TrickRound

Role = Literal["seat", "spectator", "auditor"]
SPECTATOR: Literal["spectator"] = "spectator"
AUDITOR: Literal["auditor"] = "auditor"
Viewer = int | Literal["spectator", "auditor"]


@dataclass(frozen=True)
class TableView:
    """Everything one reader may know about a match now. Fields a game does not use stay empty."""

    game: str
    players: int
    viewer: Viewer
    round: int
    kind: str | None
    dealer: int
    trump: int | None
    to_act: int | None
    hands: tuple[CardSet | None, ...]
    hand_sizes: tuple[int, ...]
    legal_actions: tuple[int, ...]
    totals: tuple[Score, ...]
    round_scores: tuple[tuple[Score, ...], ...]
    over: bool
    winners: tuple[int, ...]
    trick_leader: int | None = None
    trick: tuple[int, ...] = ()
    tricks_won: tuple[int, ...] = ()
    taken: tuple[CardSet, ...] = ()
    excluded_suits: tuple[int, ...] = ()
    table: CardSet = field(default_factory=CardSet)
    passes: tuple[int, ...] = ()
    dead: tuple[CardSet, ...] = ()
    placed: tuple[int, ...] = ()


def _check_viewer(match: Match, viewer: Viewer) -> None:
    if viewer in (SPECTATOR, AUDITOR):
        return
    if isinstance(viewer, bool) or not isinstance(viewer, int) or not 0 <= viewer < match.players:
        raise ValueError(f"viewer {viewer!r} is neither a seat, 'spectator' nor 'auditor'")


def can_see(viewer: Viewer, seat: int) -> bool:
    """Whether ``viewer`` may see the hand of ``seat``."""
    return viewer in (AUDITOR, seat)


def sees_pass_reason(viewer: Viewer, voluntary_pass: bool) -> bool:
    """Whether ``viewer`` may know if a pass was forced: not in a round with voluntary passes
    (there "forced" would tell that the seat holds no playable card), unless it audits."""
    return not voluntary_pass or viewer == AUDITOR


def view(match: Match, viewer: Viewer) -> TableView:
    """The match as ``viewer`` may see it; legal actions only for the seat to act."""
    _check_viewer(match, viewer)
    rnd = match.round
    hands = tuple(rnd.hands) if rnd is not None else (0,) * match.players
    to_act = match.to_act
    legal = tuple(cards_of(match.legal_mask())) if to_act is not None and viewer == to_act else ()
    table = rnd.table() if rnd is not None else {}
    names = view_names(match, viewer)
    if names:
        legal = renamed(legal, names)
        table["trick"] = renamed(table["trick"], names)
        table["taken"] = tuple(CardSet(renamed_mask(t.mask, names)) for t in table["taken"])
    return TableView(
        game=match.game.name,
        players=match.players,
        viewer=viewer,
        round=match.round_index,
        kind=match.plan.kind if match.plan is not None else None,
        dealer=match.dealer,
        trump=match.trump if match.trump >= 0 else None,
        to_act=to_act,
        hands=tuple(
            CardSet(renamed_mask(h, names)) if can_see(viewer, s) else None
            for s, h in enumerate(hands)
        ),
        hand_sizes=tuple(h.bit_count() for h in hands),
        legal_actions=legal,
        totals=match.totals,
        round_scores=tuple(match.round_scores),
        over=match.over,
        winners=match.winners,
        **table,
    )


def legal_actions_for(match: Match, seat: int) -> list[int]:
    """The legal actions of ``seat``, its Jokers under its own numbers: what it is offered."""
    legal = match.legal_actions()
    if any(JOKERS[0] <= a <= JOKERS[-1] for a in legal):
        names = view_names(match, seat)
        return [names.get(a, a) for a in legal]
    return legal


def view_names(match: Match, viewer: Viewer) -> Mapping[int, int]:
    """How ``viewer`` numbers the Jokers of the round in play (:mod:`.jokers`)."""
    rnd = match.round
    if viewer == AUDITOR or not isinstance(rnd, TrickRound):
        return NO_NAMES
    seat = viewer if isinstance(viewer, int) else None
    hand = rnd.hands[seat] if seat is not None else 0
    if not rnd.joker_plays and not hand & JOKER_MASK:
        return NO_NAMES
    return round_names(rnd.joker_plays, hand, seat)


class Projector:
    """Projects a log's events, in order, for one viewer.

    It follows the rounds, so that it knows where a pass's ``forced`` flag would tell a seat
    something it may not know (rounds with voluntary passes), and how the viewer numbers the
    round's Jokers.
    """

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.voluntary_pass = False
        self.own_jokers = 0
        self.jokers_played: list[int] = []

    def project(self, event: Event) -> Event:
        if isinstance(event, CardPlayed):
            if (1 << event.card) & JOKER_MASK and self.viewer != AUDITOR:
                self.jokers_played.append(event.card)
                return replace(event, card=self._names()[event.card])
            return event
        if isinstance(event, TrickWon):
            if not any((1 << card) & JOKER_MASK for card in event.cards):
                return event
            return replace(event, cards=renamed(event.cards, self._names()))
        if isinstance(event, RoundStarted):
            self.voluntary_pass = event.voluntary_pass
            self.own_jokers = 0
            self.jokers_played.clear()
            return event
        if isinstance(event, Dealt):
            viewer = self.viewer
            if isinstance(viewer, int) and (hand := event.hands[viewer]) is not None:
                self.own_jokers = hand.mask & JOKER_MASK
            names = self._names()
            hands = tuple(
                (CardSet(renamed_mask(h.mask, names)) if names else h)
                if h is not None and can_see(viewer, s)
                else None
                for s, h in enumerate(event.hands)
            )
            return event if hands == event.hands else replace(event, hands=hands)
        if isinstance(event, Passed) and not sees_pass_reason(self.viewer, self.voluntary_pass):
            return replace(event, forced=None)
        return event

    def _names(self) -> Mapping[int, int]:
        if self.viewer == AUDITOR or not (self.own_jokers or self.jokers_played):
            return NO_NAMES
        return joker_names(self.own_jokers, self.jokers_played)


def project_log(log: list[Event], viewer: Viewer) -> list[Event]:
    projector = Projector(viewer)
    return [projector.project(e) for e in log]
