"""What each reader may see: a seat, a spectator, or an auditor after the match.

This module is the only way hidden cards leave the engine, and its two rules below
(:func:`can_see` for hands, :func:`sees_pass_reason` for why a seat passed) are the only
place that decides what a reader sees: the engine's :class:`Projector` applies them to
engine events, and the server's stream (``cardarena.v1.codec.project_pb``) applies the same
two functions to the log entries it sends, so the two paths cannot disagree. A seat sees its
own hand and the public table; a spectator sees no hand at all; an auditor sees everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from .cards import CardSet, cards_of
from .events import Dealt, Event, Passed, RoundStarted, Score
from .match import Match

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
    return TableView(
        game=match.game.name,
        players=match.players,
        viewer=viewer,
        round=match.round_index,
        kind=match.plan.kind if match.plan is not None else None,
        dealer=match.dealer,
        trump=match.trump if match.trump >= 0 else None,
        to_act=to_act,
        hands=tuple(CardSet(h) if can_see(viewer, s) else None for s, h in enumerate(hands)),
        hand_sizes=tuple(h.bit_count() for h in hands),
        legal_actions=legal,
        totals=match.totals,
        round_scores=tuple(match.round_scores),
        over=match.over,
        winners=match.winners,
        **(rnd.table() if rnd is not None else {}),
    )


class Projector:
    """Projects a log's events, in order, for one viewer.

    It follows the rounds, so that it knows where a pass's ``forced`` flag would tell a seat
    something it may not know (rounds with voluntary passes).
    """

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.voluntary_pass = False

    def project(self, event: Event) -> Event:
        if isinstance(event, RoundStarted):
            self.voluntary_pass = event.voluntary_pass
            return event
        if isinstance(event, Dealt):
            hands = tuple(h if can_see(self.viewer, s) else None for s, h in enumerate(event.hands))
            return event if hands == event.hands else replace(event, hands=hands)
        if isinstance(event, Passed) and not sees_pass_reason(self.viewer, self.voluntary_pass):
            return replace(event, forced=None)
        return event


def project_log(log: list[Event], viewer: Viewer) -> list[Event]:
    projector = Projector(viewer)
    return [projector.project(e) for e in log]
