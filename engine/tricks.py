"""The trick-taking core: every Norwegian trick round and the Triathlon deal.

One state machine, configured by data: an optional trump suit (fixed, drawn, or chosen in a
short auction), optional Jokers, and a scorer that turns the tricks into points. Hands,
tricks and legal moves are bitmasks (RULES.md §1.2 and §3.3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .actions import CHOOSE_TRUMP, EXCLUDE, PASS
from .cards import (
    FRENCH_CARD_LISTS,
    JOKER_MASK,
    JOKER_SUIT,
    SUIT_MASKS,
    SUIT_NAMES,
    CardSet,
    card_code,
    mask_of,
)
from .copies import fill
from .events import CARD_PLAYED, Event, Score, SuitExcluded, TrumpChosen, check_players, trick_won

NO_TRUMP = -1
Scorer = Callable[["TrickRound"], Sequence[int]]
FOLLOW_MASKS = tuple(0 if suit == JOKER_SUIT else SUIT_MASKS[suit] for suit in range(9))
"""The cards that follow suit ``s`` when it was led: every card of it, none after a Joker."""


def playable_cards(hand: int, led_suit: int) -> int:
    """The cards ``hand`` may play to a trick whose led suit is ``led_suit`` (NO_TRUMP: leading).

    Follow suit if able (a Joker is then not allowed); otherwise anything, and the
    interchangeable Jokers count as one choice: the lowest Joker held.
    """
    if led_suit >= 0:
        follow = hand & FOLLOW_MASKS[led_suit]
        if follow:
            return follow
    jokers = hand & JOKER_MASK
    if jokers:
        hand ^= jokers ^ (jokers & -jokers)
    return hand


def void_shown(led: int, card: int) -> int:
    """The suit a seat shows it lacks by playing ``card`` to a trick led by ``led`` (-1: none).

    Not following a led suit shows a void in it, a Joker included: a Joker answers a led suit
    only from a hand without it. After a led Joker anything may be played, which shows nothing.
    """
    if (1 << led) & JOKER_MASK or card // 13 == led // 13:
        return -1
    return led // 13


class TrickInference:
    """What the plays of a trick round prove about the hand of the seat that made them:
    a void in the led suit (:func:`void_shown`), and with Jokers, that a seat that played
    Joker ``j`` holds no lower one (the rules play the lowest Joker held)."""

    __slots__ = ("led",)

    def __init__(self) -> None:
        self.led = -1

    def play(self, seat: int, card: int) -> int:
        shown = 0
        if (1 << card) & JOKER_MASK:
            shown |= JOKER_MASK & ((1 << card) - 1)
        if self.led < 0:
            self.led = card
        else:
            void = void_shown(self.led, card)
            if void >= 0:
                shown |= SUIT_MASKS[void]
        return shown

    def passed(self) -> int:
        """Nobody passes in a trick round."""
        return 0

    def trick_won(self) -> None:
        self.led = -1


def winning_card(taken: int, led: int, trump: int) -> int:
    """The card that wins a complete trick: its cards as the mask ``taken``, ``led`` first.

    A led Joker wins; otherwise the highest trump, else the highest card of the led suit.
    Card ids grow with rank within a suit, so "highest" is the top bit of a suit mask.
    """
    if (1 << led) & JOKER_MASK:
        return led
    if trump >= 0:
        trumps = taken & SUIT_MASKS[trump]
        if trumps:
            return trumps.bit_length() - 1
    return (taken & SUIT_MASKS[led // 13]).bit_length() - 1


def winning_index(trick: Sequence[int], trump: int) -> int:
    """Which card of a complete ``trick`` (in play order) wins it."""
    return trick.index(winning_card(mask_of(trick), trick[0], trump))


TRICK_SHARED = (
    *("players", "dealer", "scorer", "trump", "auction", "leader", "to_act", "trick_mask"),
    *("led_suit", "led_mask", "trick_number", "total_tricks", "last_winner", "finished", "legal"),
    *("legal_cards", "led_lists", "led_shift"),
)
"""What :meth:`TrickRound.copy` shares with the original: numbers, tuples, the scorer."""
TRICK_COPIED = ("hands", "excluded", "trick", "taken", "tricks", "joker_plays")
"""What it copies: the lists that play changes."""


class TrickRound:
    """One deal played out in tricks.

    With ``auction`` the deal opens with Triathlon's trump choice: seat ``D+1`` excludes a
    suit, ``D+2`` another, and the dealer chooses trump from the last two.

    ``legal`` is the legal mask of the seat to act, kept current by every change of state
    (0 when nobody is to act), so that asking for it costs one attribute read. When a seat
    must follow suit, ``legal_cards`` also holds those cards as a sorted tuple, read off the
    led suit's table (None otherwise): that is most plays, and it spares ``cards_of``.
    """

    __slots__ = (
        "auction",
        "dealer",
        "excluded",
        "finished",
        "hands",
        "joker_plays",
        "last_winner",
        "leader",
        "led_lists",
        "led_mask",
        "led_shift",
        "led_suit",
        "legal",
        "legal_cards",
        "players",
        "scorer",
        "taken",
        "to_act",
        "total_tricks",
        "trick",
        "trick_mask",
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
        self.players = check_players(players)
        self.hands = list(hands)
        self.dealer = dealer
        self.scorer = scorer
        self.trump = trump
        self.auction = auction
        self.excluded: list[int] = []
        self.leader = (dealer + 1) % players
        self.to_act: int | None = self.leader
        self.trick: list[int] = []
        self.joker_plays: list[tuple[int, int]] = []
        """``(seat, card)`` of each Joker played this round, in order: how readers name
        them (:mod:`.jokers`)."""
        self.trick_mask = 0
        """The cards of ``trick`` as a mask, kept by ``play``."""
        self.led_suit = NO_TRUMP
        self.led_mask = 0
        self.taken = [0] * players
        self.tricks = [0] * players
        self.trick_number = 0
        self.total_tricks = self.hands[0].bit_count()
        self.last_winner = -1
        self.finished = False
        self.legal = self._compute_legal()
        self.legal_cards: tuple[int, ...] | None = None
        self.led_lists = FRENCH_CARD_LISTS[0]
        self.led_shift = 0

    def __new__(cls, *args: object, **kwargs: object) -> TrickRound:
        """``TrickRound.__new__(TrickRound)``: an empty round for :meth:`copy` to fill, also in
        the compiled build, whose own ``__new__`` would run ``__init__`` (see :mod:`.copies`)."""
        return super().__new__(cls)

    def copy(self) -> TrickRound:
        """An independent copy to play on: every list copied, the scorer and tuples shared."""
        return fill(TrickRound.__new__(TrickRound), self, TRICK_SHARED, TRICK_COPIED)

    def start(self, out: list[Event]) -> None:
        """Nothing happens automatically at the start of a trick round."""

    # -- legal moves -------------------------------------------------------------------

    def forget_legal(self) -> None:
        """Recompute the legal mask (after hands were replaced from outside)."""
        self.legal = self._compute_legal()
        self.legal_cards = None

    def legal_mask(self) -> int:
        return self.legal

    def _compute_legal(self) -> int:
        """The legal mask from the state alone; ``play`` keeps it current more cheaply."""
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
        """Apply a legal ``action`` of the seat to act (the caller has checked legality).

        Every card of every trick game passes here, so it reads each attribute once, takes
        its event from the shared table and leaves the next seat's legal mask ready.
        """
        seat: int = self.to_act  # type: ignore[assignment]  # a round that is played has a seat to act
        if self.auction:
            self._bid(seat, action, out)
            self.legal = self._compute_legal()
            return
        hands = self.hands
        bit = 1 << action
        hands[seat] ^= bit
        out.append(CARD_PLAYED[seat][action])
        if action > 51:  # a Joker (Triathlon): how each reader names it follows the plays
            self.joker_plays.append((seat, action))
        trick = self.trick
        if trick:
            self.trick_mask |= bit
        else:
            led = self.led_suit = JOKER_SUIT if action > 51 else action // 13
            self.led_mask = FOLLOW_MASKS[led]
            if led < 4:
                self.led_lists = FRENCH_CARD_LISTS[led]
                self.led_shift = 13 * led
            self.trick_mask = bit
        trick.append(action)
        seat = (seat + 1) % self.players
        if seat == self.leader:  # everyone has played to this trick
            self._end_trick(out)
        else:
            self.to_act = seat
            hand = hands[seat]
            # playable_cards(hand, led_suit), its usual answer first: the cards that follow.
            follow = hand & self.led_mask
            if follow:
                self.legal = follow
                self.legal_cards = self.led_lists[follow >> self.led_shift]
            else:
                self.legal = playable_cards(hand, NO_TRUMP)
                self.legal_cards = None

    def _end_trick(self, out: list[Event]) -> None:
        """The complete trick goes to its winner, who leads the next one (if any)."""
        trick = self.trick
        taken = self.trick_mask
        leader = self.leader
        winner = (leader + trick.index(winning_card(taken, trick[0], self.trump))) % self.players
        out.append(trick_won(self.trick_number, leader, tuple(trick), winner))
        trick.clear()
        self.taken[winner] |= taken
        self.tricks[winner] += 1
        number = self.trick_number = self.trick_number + 1
        self.last_winner = self.leader = winner
        if number == self.total_tricks:
            self.finished = True
            self.to_act = None
            self.legal = 0
            self.legal_cards = None
        else:
            self.to_act = winner
            hand = self.hands[winner]
            # playable_cards(hand, NO_TRUMP): a leader may play anything, Jokers counting once.
            self.legal = playable_cards(hand, NO_TRUMP) if hand & JOKER_MASK else hand
            self.legal_cards = None

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
