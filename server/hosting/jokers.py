"""How each reader numbers a match's Jokers at any point of its log, for what the server sends.

Why: no reader is shown the engine's numbers for Triathlon's interchangeable Jokers while the
match is live (``cardarena.engine.jokers`` says why, and the rule). A stream may start or
resume anywhere in the log, and a write's events may end one deal and start the next, so the
names an entry is shown with are looked up by its seq, from the round it belongs to: each
reader's dealt Jokers and the Jokers played up to that seq. The ledger follows the stored
entries once each, in order (as the match publishes them, or as it is loaded), and holds a
few numbers per deal; matches of games without Jokers hold nothing.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cardarena.engine.jokers import NO_NAMES, joker_names
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

NAMED_KINDS = frozenset({"dealt", "card_played", "trick_won"})
"""The entries that may show a Joker."""


@dataclass
class _Deal:
    start: int
    """The seq of its RoundStarted."""
    dealt: tuple[int, ...]
    """Each seat's dealt Jokers, a mask."""
    plays: list[tuple[int, int]] = field(default_factory=list)
    """``(seq, card)`` of each Joker played, in order."""


class JokerLedger:
    """The Jokers of a match's deals, as its log tells them: enough to name them for any
    reader at any seq."""

    def __init__(self) -> None:
        self._deals: list[_Deal] = []
        self._starts: list[int] = []
        self._round_start = 0
        self._last = 0

    def follow(self, entry: pb.Event) -> None:
        """Take in a stored entry (every hand whole); an entry already followed is skipped."""
        if entry.seq <= self._last:
            return
        self._last = entry.seq
        kind = entry.WhichOneof("kind")
        if kind == "round_started":
            self._round_start = entry.seq
        elif kind == "dealt":
            dealt = tuple(_jokers_in(hand.cards) for hand in entry.dealt.hands)
            if any(dealt):
                self._deals.append(_Deal(self._round_start, dealt))
                self._starts.append(self._round_start)
        elif kind == "card_played" and self._deals:
            card = entry.card_played.card
            if card.suit == pb.SUIT_JOKER:
                self._deals[-1].plays.append((entry.seq, codec.card_from_pb(card)))

    def shows_jokers(self, entries: Sequence[pb.Event]) -> bool:
        """Whether any of ``entries`` (followed) shows a Joker another reader may name otherwise:
        such a write cannot be sent whole to every reader."""
        if not self._deals:
            return False
        for entry in entries:
            kind = entry.WhichOneof("kind")
            if kind == "card_played" and entry.card_played.card.suit == pb.SUIT_JOKER:
                return True
            if kind == "trick_won" and any(c.suit == pb.SUIT_JOKER for c in entry.trick_won.cards):
                return True
        return False

    def names(self, entry: pb.Event, seat: int | None) -> Mapping[int, int]:
        """Engine Joker id -> the id ``seat`` (``None``: a spectator) is shown in ``entry``."""
        if not self._deals or entry.WhichOneof("kind") not in NAMED_KINDS:
            return NO_NAMES
        at = bisect.bisect_right(self._starts, entry.seq) - 1
        if at < 0:
            return NO_NAMES
        deal = self._deals[at]
        own = deal.dealt[seat] if seat is not None and seat < len(deal.dealt) else 0
        return joker_names(own, (card for seq, card in deal.plays if seq <= entry.seq))


def _jokers_in(cards: Sequence[pb.Card]) -> int:
    mask = 0
    for card in cards:
        if card.suit == pb.SUIT_JOKER:
            mask |= 1 << codec.card_from_pb(card)
    return mask
