"""Fan Tan, the Norwegian games' solitaire round (RULES.md §1.4).

The table is summarised as one mask, ``playable``: every card that could go down next, by
anyone. A seat's legal cards are then ``hand & playable``; a play updates only its suit.
Ace is low here: ranks run ``A=1 … K=13``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .actions import PASS
from .cards import HEARTS, SUIT_MASKS, CardSet, french
from .events import CARD_PLAYED, PASSED, Event, Score
from .traits import Layout, LayoutRound

SEVEN_OF_HEARTS = french(HEARTS, 7)


def fan_tan_rank(card: int) -> int:
    """Ace-low rank of a French card: ``A=1 … K=13``."""
    index = card % 13
    return 1 if index == 12 else index + 2


def fan_tan_card(suit: int, rank: int) -> int:
    return french(suit, 14 if rank == 1 else rank)


def suit_playable(suit: int, low: int, high: int, *, six_and_seven: bool) -> int:
    """The cards of ``suit`` that may go down next, given its ends on the table (0: none).

    Plain: a seven opens the row, which then grows one rank down (to A) and up (to K).
    Six and seven: a six opens the low stack and a seven the high stack, in either order;
    the low stack grows down to A, the high stack up to K.
    """
    mask = 0
    if six_and_seven:
        if low == 0:
            mask |= 1 << fan_tan_card(suit, 6)
        elif low > 1:
            mask |= 1 << fan_tan_card(suit, low - 1)
        if high == 0:
            mask |= 1 << fan_tan_card(suit, 7)
        elif high < 13:
            mask |= 1 << fan_tan_card(suit, high + 1)
    elif low == 0:
        mask |= 1 << fan_tan_card(suit, 7)
    else:
        if low > 1:
            mask |= 1 << fan_tan_card(suit, low - 1)
        if high < 13:
            mask |= 1 << fan_tan_card(suit, high + 1)
    return mask


FAN_TAN_RANKS: Final = tuple(fan_tan_rank(card) for card in range(52))
"""``fan_tan_rank`` of every French card, looked up on every play."""


def _playable_table(six_and_seven: bool) -> tuple[int, ...]:
    """``suit_playable`` for every suit and pair of ends, at ``(suit * 14 + low) * 14 + high``.

    Why: the table changes after every card. Looking the answer up keeps the rule in
    ``suit_playable`` alone and costs a fraction of asking it again.
    """
    return tuple(
        suit_playable(suit, low, high, six_and_seven=six_and_seven)
        for suit in range(4)
        for low in range(14)
        for high in range(14)
    )


PLAYABLE_TABLES: Final = (_playable_table(False), _playable_table(True))
"""``PLAYABLE_TABLES[six_and_seven]``, see :func:`_playable_table`."""


def row_ends(low: int, high: int, rank: int, *, six_and_seven: bool) -> tuple[int, int]:
    """A suit's two ends on the table after a card of ``rank`` went down on it (0: unopened).

    Plain: the seven opens the row at both ends. Six and seven: the six opens the low stack,
    the seven the high stack; each then grows outwards.
    """
    if six_and_seven:
        if (rank == 6 and low == 0) or rank < low:
            return rank, high
        return low, rank
    if low == 0:
        return rank, rank
    if rank < low:
        return rank, high
    return low, rank


class FanTanLayout(Layout):
    """Fan Tan's table as a :class:`Layout`: the rules of this module, ace low. One of each
    kind, in :data:`FAN_TAN_LAYOUTS` (a plain class rather than a frozen dataclass, so that the
    optional mypyc build can compile it)."""

    def __init__(self, *, six_and_seven: bool) -> None:
        self.six_and_seven = six_and_seven

    def __reduce__(self) -> tuple[Callable[[bool], FanTanLayout], tuple[bool]]:
        """A copy or an unpickled one is the module's own of its kind (mypyc's classes cannot
        be made without their ``__init__``)."""
        return fan_tan_layout, (self.six_and_seven,)

    def suit(self, card: int) -> int:
        return card // 13

    def rank(self, card: int) -> int:
        return FAN_TAN_RANKS[card]

    def ends(self, low: int, high: int, rank: int) -> tuple[int, int]:
        return row_ends(low, high, rank, six_and_seven=self.six_and_seven)

    def playable(self, suit: int, low: int, high: int) -> int:
        return suit_playable(suit, low, high, six_and_seven=self.six_and_seven)


FAN_TAN_LAYOUTS: Final = (FanTanLayout(six_and_seven=False), FanTanLayout(six_and_seven=True))
"""``FAN_TAN_LAYOUTS[six_and_seven]``."""


def fan_tan_layout(six_and_seven: bool) -> FanTanLayout:
    return FAN_TAN_LAYOUTS[six_and_seven]


FAN_TAN_SHARED = (
    *("dealer", "six_and_seven", "voluntary_pass", "winner_scores_zero", "first_play"),
    *("consecutive_passes", "went_out", "to_act", "legal"),
)
"""What :meth:`FanTanRound.copy` shares besides the table (its ``passes`` it copies)."""


class FanTanRound(LayoutRound):
    """One Fan Tan round; ``openers`` is ``"seven"`` (plain) or ``"six_and_seven"``.

    ``low[s]``/``high[s]`` are the ends of suit ``s`` on the table (0 when not yet opened). In
    plain Fan Tan they are the two ends of one row; with six and seven they are the tops of the
    low stack (started by the six) and of the high stack (started by the seven).
    """

    __slots__ = (
        "consecutive_passes",
        "dealer",
        "first_play",
        "legal",
        "passes",
        "six_and_seven",
        "to_act",
        "voluntary_pass",
        "went_out",
        "winner_scores_zero",
    )

    def __init__(
        self,
        players: int,
        hands: tuple[int, ...],
        dealer: int,
        *,
        openers: str,
        voluntary_pass: bool,
        winner_scores_zero: bool,
    ) -> None:
        six_and_seven = openers == "six_and_seven"
        self._lay_out(
            players,
            hands,
            sum(suit_playable(suit, 0, 0, six_and_seven=six_and_seven) for suit in range(4)),
        )
        self.dealer = dealer
        self.six_and_seven = six_and_seven
        self.voluntary_pass = voluntary_pass
        self.winner_scores_zero = winner_scores_zero
        self.passes = [0] * players
        self.first_play = True
        self.consecutive_passes = 0
        self.went_out: int | None = None
        self.to_act: int | None = next(
            s for s in range(players) if self.hands[s] >> SEVEN_OF_HEARTS & 1
        )
        self.legal = self._compute_legal()

    def copy(self) -> FanTanRound:
        """An independent copy to play on: every list copied."""
        return self._copy_as(FAN_TAN_SHARED, ("passes",))

    def start(self, out: list[Event]) -> None:
        """The holder of 7H opens; nothing is automatic before that."""

    def _compute_legal(self) -> int:
        if self.to_act is None:
            return 0
        if self.first_play:
            return 1 << SEVEN_OF_HEARTS
        cards = self.hands[self.to_act] & self.playable
        if not cards:
            return 1 << PASS
        if self.voluntary_pass and self.consecutive_passes < self.players:
            return cards | 1 << PASS
        return cards

    def why_illegal(self, action: int) -> str:
        if self.first_play:
            return "Fan Tan opens with 7H"
        if action == PASS:
            if self.voluntary_pass:
                return "every seat has passed in succession: you can play, so you must"
            return "you can play, so you must (passing is only for a seat with no playable card)"
        if action > PASS:
            return "play a card or pass"
        return self._card_refused(action, "does not fit the table yet")

    def play(self, action: int, out: list[Event]) -> None:
        """Apply a legal ``action``, then move on to the next seat (the next that can play,
        where passes are never voluntary).

        Every Fan Tan card passes here, so the table update and the turn order are written
        out in place rather than spread over helpers.
        """
        seat: int = self.to_act  # type: ignore[assignment]  # a round that is played has a seat to act
        hands, players = self.hands, self.players
        if action == PASS:
            # Only a voluntary-pass round asks a seat that cannot play; its pass is forced.
            self._pass(seat, out, forced=not hands[seat] & self.playable)
        else:
            self._place(seat, action, out)
            if self.finished:
                return
        playable = self.playable
        seat = (seat + 1) % players
        if self.voluntary_pass:
            # Every seat is asked, even one whose only legal action is the pass (RULES.md,
            # "Forced pass"): a pass applied here, inside the previous seat's action, would
            # tell everyone by its grouping and timing that it was forced.
            self.to_act = seat
            cards = hands[seat] & playable
            if not cards or self.consecutive_passes < players:
                cards |= 1 << PASS
            self.legal = cards
            return
        # The next seat in play order; a seat with no playable card passes automatically.
        while not hands[seat] & playable:
            self._pass(seat, out, forced=True)
            seat = (seat + 1) % players
        self.to_act = seat
        # _compute_legal() for a seat that can play, after the opening 7H: its playable cards.
        self.legal = hands[seat] & playable

    def _place(self, seat: int, card: int, out: list[Event]) -> None:
        """Put ``card`` on the table and move its suit's end; an empty hand ends the round."""
        self.first_play = False
        self.consecutive_passes = 0
        bit = 1 << card
        hand = self.hands[seat] ^ bit
        self.hands[seat] = hand
        self.table_mask |= bit
        out.append(CARD_PLAYED[seat][card])
        suit = card // 13
        low, high = row_ends(
            self.low[suit], self.high[suit], FAN_TAN_RANKS[card], six_and_seven=self.six_and_seven
        )
        self.low[suit], self.high[suit] = low, high
        moves = PLAYABLE_TABLES[self.six_and_seven][(suit * 14 + low) * 14 + high]
        self.playable = (self.playable & ~SUIT_MASKS[suit]) | moves
        if not hand:
            self.went_out = seat
            self.finished = True
            self.to_act = None
            self.legal = 0

    def _pass(self, seat: int, out: list[Event], *, forced: bool) -> None:
        self.passes[seat] += 1
        self.consecutive_passes += 1
        out.append(PASSED[forced][seat])

    def scores(self) -> tuple[Score, ...]:
        out: list[Score] = []
        for seat in range(self.players):
            if seat == self.went_out:
                out.append(0 if self.winner_scores_zero else self.passes[seat])
            else:
                out.append(self.passes[seat] + self.hands[seat].bit_count())
        return tuple(out)

    def table(self) -> dict[str, Any]:
        return {"table": CardSet(self.table_mask), "passes": tuple(self.passes)}
