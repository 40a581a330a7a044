"""The trick-taking core: every Norwegian trick round and the Triathlon deal.

One state machine, configured by data: an optional trump suit (fixed, drawn, or chosen in a
short auction), optional Jokers, and a scorer that turns the tricks into points. Hands,
tricks and legal moves are bitmasks (RULES.md §1.2 and §3.3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .actions import CHOOSE_TRUMP, EXCLUDE, PASS
from .cards import JOKER_MASK, JOKER_SUIT, SUIT_MASKS, SUIT_NAMES, CardSet, card_code
from .events import CardPlayed, Event, Score, SuitExcluded, TrickWon, TrumpChosen

NO_TRUMP = -1
Scorer = Callable[["TrickRound"], Sequence[int]]


def playable_cards(hand: int, led_suit: int) -> int:
    """The cards ``hand`` may play to a trick whose led suit is ``led_suit`` (NO_TRUMP: leading).

    Follow suit if able (a Joker is then not allowed); otherwise anything, and the
    interchangeable Jokers count as one choice: the lowest Joker held.
    """
    if led_suit >= 0 and led_suit != JOKER_SUIT:
        follow = hand & SUIT_MASKS[led_suit]
        if follow:
            return follow
    jokers = hand & JOKER_MASK
    if jokers:
        hand ^= jokers ^ (jokers & -jokers)
    return hand


def winning_index(trick: Sequence[int], trump: int) -> int:
    """Which card of a complete ``trick`` (in play order) wins it.

    A led Joker wins; otherwise the highest trump, else the highest card of the led suit.
    Card ids grow with rank within a suit, so "highest" is the top bit of a suit mask.
    """
    led = trick[0]
    if (1 << led) & JOKER_MASK:
        return 0
    mask = 0
    for card in trick:
        mask |= 1 << card
    if trump >= 0:
        trumps = mask & SUIT_MASKS[trump]
        if trumps:
            return trick.index(trumps.bit_length() - 1)
    return trick.index((mask & SUIT_MASKS[led // 13]).bit_length() - 1)


class TrickRound:
    """One deal played out in tricks.

    With ``auction`` the deal opens with Triathlon's trump choice: seat ``D+1`` excludes a
    suit, ``D+2`` another, and the dealer chooses trump from the last two.
    """

    __slots__ = (
        "_legal",
        "auction",
        "dealer",
        "excluded",
        "finished",
        "hands",
        "last_winner",
        "leader",
        "led_suit",
        "players",
        "scorer",
        "taken",
        "to_act",
        "total_tricks",
        "trick",
        "trick_number",
        "tricks",
        "trump",
    )

    def __init__(
        self,
        players: int,
        hands: Sequence[int],
        dealer: int,
        scorer: Scorer,
        *,
        trump: int = NO_TRUMP,
        auction: bool = False,
    ) -> None:
        self.players = players
        self.hands = list(hands)
        self.dealer = dealer
        self.scorer = scorer
        self.trump = trump
        self.auction = auction
        self.excluded: list[int] = []
        self.leader = (dealer + 1) % players
        self.to_act: int | None = self.leader
        self.trick: list[int] = []
        self.led_suit = NO_TRUMP
        self.taken = [0] * players
        self.tricks = [0] * players
        self.trick_number = 0
        self.total_tricks = self.hands[0].bit_count()
        self.last_winner = -1
        self.finished = False
        self._legal = -1

    def start(self, out: list[Event]) -> None:
        """Nothing happens automatically at the start of a trick round."""

    # -- legal moves -------------------------------------------------------------------

    def forget_legal(self) -> None:
        """Drop the cached legal mask (after hands were replaced from outside)."""
        self._legal = -1

    def legal_mask(self) -> int:
        legal = self._legal
        if legal < 0:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> int:
        if self.to_act is None:
            return 0
        if self.auction:
            open_suits = [s for s in range(4) if s not in self.excluded]
            base = EXCLUDE if len(self.excluded) < 2 else CHOOSE_TRUMP
            return sum(1 << (base + s) for s in open_suits)
        return playable_cards(self.hands[self.to_act], self.led_suit if self.trick else NO_TRUMP)

    def why_illegal(self, action: int) -> str:
        if self.auction:
            if action == PASS or action < EXCLUDE:
                return "the trump must be settled before play: name a suit"
            if len(self.excluded) < 2:
                return "exclude a suit that is still open (exclude:<suit>)"
            return "choose the trump from the two suits left (trump:<suit>)"
        if action >= PASS:
            return "you must play a card"
        assert self.to_act is not None
        hand = self.hands[self.to_act]
        is_joker = bool((1 << action) & JOKER_MASK)
        held = bool(hand & JOKER_MASK) if is_joker else bool(hand >> action & 1)
        if not held:
            return f"you do not hold {card_code(action)}"
        led = SUIT_NAMES[self.led_suit]
        if is_joker:
            return f"{led} was led and you hold {led}: you must follow suit, not play a Joker"
        return f"{led} was led and you hold {led}: you must follow suit"

    def normalize(self, action: int) -> int:
        """Any Joker id means "a Joker": the lowest one the seat holds."""
        if (1 << action) & JOKER_MASK and self.to_act is not None:
            jokers = self.hands[self.to_act] & JOKER_MASK
            if jokers:
                return (jokers & -jokers).bit_length() - 1
        return action

    # -- play --------------------------------------------------------------------------

    def play(self, action: int, out: list[Event]) -> None:
        """Apply a legal ``action`` of the seat to act (the caller has checked legality)."""
        seat: int = self.to_act  # type: ignore[assignment]  # a round that is played has a seat to act
        self._legal = -1
        if self.auction:
            self._bid(seat, action, out)
            return
        card = action
        self.hands[seat] ^= 1 << card
        out.append(CardPlayed(seat, card))
        trick = self.trick
        if not trick:
            self.led_suit = JOKER_SUIT if card > 51 else card // 13
        trick.append(card)
        players = self.players
        if len(trick) < players:
            self.to_act = (seat + 1) % players
            return
        winner = (self.leader + winning_index(trick, self.trump)) % players
        out.append(TrickWon(self.trick_number, self.leader, tuple(trick), winner))
        taken = 0
        for card in trick:
            taken |= 1 << card
        self.taken[winner] |= taken
        self.tricks[winner] += 1
        self.trick_number += 1
        self.last_winner = winner
        self.trick = []
        self.leader = winner
        if self.trick_number == self.total_tricks:
            self.finished = True
            self.to_act = None
        else:
            self.to_act = winner

    def _bid(self, seat: int, action: int, out: list[Event]) -> None:
        if action < CHOOSE_TRUMP:
            suit = action - EXCLUDE
            self.excluded.append(suit)
            out.append(SuitExcluded(seat, suit))
            self.to_act = (seat + 1) % self.players if len(self.excluded) == 1 else self.dealer
            return
        self.trump = action - CHOOSE_TRUMP
        out.append(TrumpChosen(seat, self.trump))
        self.auction = False
        self.to_act = self.leader

    def scores(self) -> tuple[Score, ...]:
        return tuple(self.scorer(self))

    # -- views -------------------------------------------------------------------------

    def table(self) -> dict[str, Any]:
        """The public part of the round, for views."""
        return {
            "trick_leader": self.leader if self.to_act is not None else None,
            "trick": tuple(self.trick),
            "tricks_won": tuple(self.tricks),
            "taken": tuple(CardSet(m) for m in self.taken),
            "excluded_suits": tuple(self.excluded),
        }
