"""Crazy Sixes (seises cabrón), one hand (RULES.md §2.2 and §2.3).

A Fan-Tan-like layout with gaps allowed: an opened suit takes any card strictly below its
lowest or strictly above its highest card on the table, and every card left strictly
between them is dead at once. As in Fan Tan, the table is summarised by one ``playable`` mask.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar, Final

from .actions import PASS
from .cards import (
    OROS,
    SPANISH_BASE,
    SPANISH_CARD_LISTS,
    SUIT_MASKS,
    CardSet,
    cards_of,
    mask_of,
    spanish,
)
from .decks import spanish_deck
from .events import CARD_PLAYED, MAX_SEATS, PASSED, CardsDead, Event, cards_dead
from .exact import WHOLE, WHOLE_COUNT, fraction
from .traits import Layout, LayoutRound

SIX_OF_OROS = spanish(OROS, 6)
_OROS, _COPAS, _ESPADAS, _BASTOS = SPANISH_CARD_LISTS
_COPAS_AT, _ESPADAS_AT, _BASTOS_AT = (SPANISH_BASE + 12 * s for s in range(1, 4))
"""The card id of each suit's ace but that of Oros (``SPANISH_BASE``): where its 12 bits start."""
SIXES = sum(1 << spanish(OROS + s, 6) for s in range(4))
ACES_AND_KINGS = sum(1 << spanish(OROS + s, r) for s in range(4) for r in (1, 12))


def _ranks_mask(suit_index: int, low_rank: int, high_rank: int) -> int:
    """Cards of the suit with ``low_rank <= rank <= high_rank`` (empty when low > high)."""
    if low_rank > high_rank:
        return 0
    width = high_rank - low_rank + 1
    return ((1 << width) - 1) << (SPANISH_BASE + 12 * suit_index + low_rank - 1)


def suit_playable(suit_index: int, low: int, high: int) -> int:
    """Cards of suit ``suit_index`` (0..3 = O C E B) playable with ``low..high`` on the table.

    An unopened suit (``low == 0``) takes only its six; an opened one any card strictly below
    its lowest or strictly above its highest: gaps may be skipped.
    """
    if low == 0:
        return _ranks_mask(suit_index, 6, 6)
    return _ranks_mask(suit_index, 1, low - 1) | _ranks_mask(suit_index, high + 1, 12)


def spanish_cards(mask: int) -> tuple[int, ...]:
    """The cards of ``mask``, Spanish cards only, in ascending order: ``cards_of`` as a tuple,
    read suit by suit from the Spanish card lists.

    Why: a hand keeps its legal cards as this tuple (``legal_cards``), which ``Match`` copies
    into the list it hands out instead of telling the deck of ``legal`` and reading it itself.
    """
    spanish = mask >> SPANISH_BASE
    return (
        _OROS[spanish & 4095]
        + _COPAS[spanish >> 12 & 4095]
        + _ESPADAS[spanish >> 24 & 4095]
        + _BASTOS[spanish >> 36]
    )


def row_ends(low: int, high: int, rank: int) -> tuple[int, int]:
    """A suit's lowest and highest rank on the table after a card of ``rank`` went down on
    it (0, 0: unopened). The card is playable, so it lies outside the two, or opens the suit."""
    if low == 0:
        return rank, rank
    if rank < low:
        return rank, high
    return low, rank


def dead_zone(suit_index: int, low: int, high: int) -> int:
    """Cards strictly between the suit's lowest and highest card on the table."""
    return _ranks_mask(suit_index, low + 1, high - 1) if low else 0


def _by_ends(rule: Callable[[int, int, int], int]) -> tuple[int, ...]:
    """``rule(suit, low, high)`` for every suit and pair of ends, at ``(suit * 13 + low) * 13 + high``.

    Why: both answers are needed after every card. Looking them up keeps each rule in its
    function alone and costs a fraction of asking it again.
    """
    return tuple(
        rule(suit, low, high) for suit in range(4) for low in range(13) for high in range(13)
    )


PLAYABLE_BY_ENDS: Final = _by_ends(suit_playable)
DEAD_ZONE_BY_ENDS: Final = _by_ends(dead_zone)
CARD_SUIT: Final = tuple((c - SPANISH_BASE) // 12 for c in range(SPANISH_BASE + 48))
"""A Spanish card's row, ``0..3`` (by card id; the French ids below are never looked up)."""
CARD_RANK: Final = tuple((c - SPANISH_BASE) % 12 + 1 for c in range(SPANISH_BASE + 48))
"""A Spanish card's rank, ``1..12`` (by card id, as :data:`CARD_SUIT`)."""
CARD_BITS: Final = tuple(1 << c for c in range(SPANISH_BASE + 48))
"""``1 << card``, made once: a Spanish card's bit is a number of several machine words."""
OTHER_SUITS: Final = tuple(~SUIT_MASKS[OROS + s] for s in range(4))
"""Every card but those of row ``s``: clears a row's playable cards before they are redone."""

Transition = tuple[int, int, int, int, int]
"""What a card does to its row: the row's new ends ``low, high``, the cards it kills, every
card but its row's (:data:`OTHER_SUITS`) and its row's playable cards, of the deck in play."""

DECK_SPAN: Final = 1 << 15
"""Above every ``card * 169 + low * 13 + high``: each deck's transitions start at a multiple."""


def _transitions(deck_mask: int, offset: int) -> dict[int, Transition]:
    """The :data:`Transition` of each card onto each row it may go down on, at
    ``offset + card * 169 + low * 13 + high`` (the row's ends before it), for ``deck_mask``.

    The cards killed are those strictly between the card and the end it went past: the new
    part of the dead zone (:func:`dead_zone`) but that end, which is on the table.
    """
    table: dict[int, Transition] = {}
    for suit in range(4):
        # The rows a card can go down on: unopened, or around the six (low <= 6 <= high).
        for low, high in ((0, 0), *((lo, hi) for lo in range(1, 7) for hi in range(6, 13))):
            at = suit * 169 + low * 13 + high
            for card in cards_of(PLAYABLE_BY_ENDS[at]):
                rank = CARD_RANK[card]
                new_low, new_high = row_ends(low, high, rank)
                after = suit * 169 + new_low * 13 + new_high
                if not low:
                    killed = 0
                elif rank < low:
                    killed = _ranks_mask(suit, rank + 1, low - 1)
                else:
                    killed = _ranks_mask(suit, high + 1, rank - 1)
                table[offset + card * 169 + low * 13 + high] = (
                    new_low,
                    new_high,
                    killed & deck_mask,
                    OTHER_SUITS[suit],
                    PLAYABLE_BY_ENDS[after] & deck_mask,
                )
    return table


DECK_OFFSETS: Final = {
    mask_of(spanish_deck(size)): number * DECK_SPAN for number, size in enumerate((48, 40))
}
"""Where each deck of the rules (48 or 40 cards) starts in :data:`TRANSITIONS`, by its mask."""
TRANSITIONS: Final = {
    key: change
    for deck_mask, offset in DECK_OFFSETS.items()
    for key, change in _transitions(deck_mask, offset).items()
}
"""What each card does to its row, at ``DECK_OFFSETS[deck] + card * 169 + low * 13 + high``.

Why: every card of every hand moves its row's ends, kills what it jumped over and changes
what may go down next; one lookup, made here from the rule functions above, gives all of it.
One table for both decks, rather than one per hand, so that a copied hand copies none of it.
"""

SEATS: Final = tuple(tuple(range(players)) for players in range(MAX_SEATS + 1))
"""``SEATS[n]``: the seats of an ``n``-seat hand in order, made once rather than a ``range``
each time a card kills (about every other card)."""

DEAD_EVENTS: Final[tuple[dict[int, CardsDead], ...]] = tuple({} for _ in range(MAX_SEATS))
"""Every ``CardsDead`` made so far, as ``DEAD_EVENTS[seat][cards]``.

Why: about every other card kills, often several cards of a hand at once, and building the
event costs several times a look-up; an event is immutable and compared by value, so one
shared instance is as good as a fresh one (as :data:`.events.CARD_PLAYED`). The cards killed
at once are of one suit, so there are at most ``4 * 2**12`` of them for each seat.
"""


class SixesLayout(Layout):
    """The Crazy Sixes table as a :class:`Layout`: the rules of this module; one,
    :data:`SIXES_LAYOUT`."""

    jumps: ClassVar[bool] = True

    def __reduce__(self) -> str:
        """A copy or an unpickled one is :data:`SIXES_LAYOUT` itself."""
        return "SIXES_LAYOUT"

    def suit(self, card: int) -> int:
        return (card - SPANISH_BASE) // 12

    def rank(self, card: int) -> int:
        return (card - SPANISH_BASE) % 12 + 1

    def ends(self, low: int, high: int, rank: int) -> tuple[int, int]:
        return row_ends(low, high, rank)

    def playable(self, suit: int, low: int, high: int) -> int:
        return suit_playable(suit, low, high)


SIXES_LAYOUT: Final = SixesLayout()


SIXES_SHARED = (
    *("deck_mask", "split", "pool", "must_open_oros", "starter", "to_act", "legal"),
    *("offset", "dealt"),
)
"""What :meth:`SixesHand.copy` shares besides the table (its ``dead`` it copies)."""


class SixesHand(LayoutRound):
    """One hand of Crazy Sixes.

    ``starter`` leads; on the first hand of a match (``must_open_oros``) the holder of 6O
    starts and must play it.
    """

    __slots__ = (
        "dead",
        "dealt",
        "deck_mask",
        "legal",
        "must_open_oros",
        "offset",
        "pool",
        "split",
        "starter",
        "to_act",
    )

    def __init__(
        self,
        players: int,
        deck_mask: int,
        split: str,
        pool: str,
        starter: int | None,
        hands: tuple[int, ...],
        dealer: int = -1,
        trump: int = -1,
    ) -> None:
        """The hand's rules, then its deal: the order in which a round plan's builder
        (:func:`.crazy_sixes.hand_plans`) gives them, so that the builder is this class with
        the rules bound. The dealer and the trump, which every builder is given, play no
        part in a hand of Crazy Sixes."""
        self._lay_out(players, hands, SIXES)
        self.deck_mask = deck_mask
        self.offset = DECK_OFFSETS[deck_mask]
        self.split = split
        self.pool = pool
        self.dead = [0] * players
        self.dealt = tuple(map(int.bit_count, hands))
        self.must_open_oros = starter is None
        if starter is None:
            starter = next(s for s in range(players) if self.hands[s] >> SIX_OF_OROS & 1)
            self.legal, self.legal_cards = 1 << SIX_OF_OROS, (SIX_OF_OROS,)
        else:  # :meth:`start` finds the first seat that can play, and its legal cards
            self.legal, self.legal_cards = 0, ()
        self.starter = starter
        self.to_act: int | None = starter

    def copy(self) -> SixesHand:
        """An independent copy to play on: every list copied."""
        return self._copy_as(SIXES_SHARED, ("dead",))

    @property
    def placed(self) -> list[int]:
        """How many cards each seat has put down: what it was dealt but holds no more and has
        not lost to its dead pile (a hand loses cards no other way)."""
        return [
            dealt - hand.bit_count() - dead.bit_count()
            for dealt, hand, dead in zip(self.dealt, self.hands, self.dead, strict=True)
        ]

    def start(self, out: list[Event]) -> None:
        """A later hand's starter without a six passes at once. Until this, a later hand has
        no legal actions: a round is started as soon as it is built (``Match``)."""
        if not self.must_open_oros:
            assert self.to_act is not None
            self._settle(self.to_act, out)

    def forget_legal(self) -> None:
        """Work the legal mask and tuple out from the state (at the deal, or after hands were
        replaced from outside); the tuple is None when the seat to act can only pass, which
        only a hand replaced from outside brings about."""
        legal = self.legal = self._compute_legal()
        self.legal_cards = None if legal >> PASS else spanish_cards(legal)

    def _compute_legal(self) -> int:
        if self.to_act is None:
            return 0
        if self.must_open_oros:
            return 1 << SIX_OF_OROS
        return self.hands[self.to_act] & self.playable or 1 << PASS

    def why_illegal(self, action: int) -> str:
        if self.must_open_oros:
            return "the first hand opens with 6O"
        if action == PASS:
            return "you can play, so you must"
        if action > PASS:
            return "play a card"
        return self._card_refused(
            action,
            "is not playable: a suit opens with its six, then takes only cards below its lowest"
            " or above its highest card on the table",
        )

    def play(self, action: int, out: list[Event]) -> None:
        """Put the card down, move its suit's ends, kill what it jumped over, then find the
        next seat to act. Every card of every hand passes here, so :meth:`_place`,
        :meth:`_kill` and :meth:`_settle` are written out in it, and the change a card makes
        to its row is looked up (:data:`TRANSITIONS`), not worked out
        (tests/engine/test_engine_fastpaths.py plays both ways and compares)."""
        seat: int = self.to_act  # type: ignore[assignment]  # a round that is played has a seat to act
        self.must_open_oros = False
        bit = CARD_BITS[action]
        hands = self.hands
        hands[seat] ^= bit
        self.table_mask |= bit
        out.append(CARD_PLAYED[seat][action])
        suit = CARD_SUIT[action]
        low_ends, high_ends = self.low, self.high
        low_ends[suit], high_ends[suit], killed, others, row = TRANSITIONS[
            self.offset + action * 169 + low_ends[suit] * 13 + high_ends[suit]
        ]
        players = self.players
        if killed:
            # Every card it jumped over is in a hand: it was neither on the table nor dead.
            dead = self.dead
            for holder in SEATS[players]:
                hand = hands[holder]
                newly_dead = hand & killed
                if newly_dead:
                    hands[holder] = hand ^ newly_dead
                    dead[holder] |= newly_dead
                    try:
                        event = DEAD_EVENTS[holder][newly_dead]
                    except KeyError:
                        event = DEAD_EVENTS[holder][newly_dead] = cards_dead(holder, newly_dead)
                    out.append(event)
                    if newly_dead == killed:
                        break
                    killed ^= newly_dead
        playable = self.playable = (self.playable & others) | row
        if not playable:  # every ace and king is down: nothing can go down any more
            self._finish()
            return
        # _settle(seat + 1, out)
        seat += 1
        if seat == players:
            seat = 0
        legal = hands[seat] & playable
        while not legal:
            if hands[seat]:
                out.append(PASSED[True][seat])
            seat += 1
            if seat == players:
                seat = 0
            legal = hands[seat] & playable
        self.to_act = seat
        self.legal = legal
        # spanish_cards(legal), written out for the same reason
        self.legal_cards = (
            _OROS[legal >> SPANISH_BASE & 4095]
            + _COPAS[legal >> _COPAS_AT & 4095]
            + _ESPADAS[legal >> _ESPADAS_AT & 4095]
            + _BASTOS[legal >> _BASTOS_AT]
        )

    def _finish(self) -> None:
        """The hand is over: nobody is to act."""
        self.finished = True
        self.to_act = None
        self.legal = 0
        self.legal_cards = ()

    def _place(self, seat: int, card: int, out: list[Event]) -> None:
        """Put ``card`` on the table, move its suit's end and kill what it jumped over.

        The plain form of the first half of :meth:`play`, kept for the tests that compare."""
        bit = 1 << card
        self.hands[seat] ^= bit
        table = self.table_mask = self.table_mask | bit
        out.append(CARD_PLAYED[seat][card])
        suit = SIXES_LAYOUT.suit(card)
        old_low, old_high = self.low[suit], self.high[suit]
        low, high = self.low[suit], self.high[suit] = row_ends(
            old_low, old_high, SIXES_LAYOUT.rank(card)
        )
        grown = dead_zone(suit, low, high) & ~dead_zone(suit, old_low, old_high)
        if grown & ~table:
            self._kill(grown & ~table, out)
        self.playable = (self.playable & ~SUIT_MASKS[OROS + suit]) | (
            suit_playable(suit, low, high) & self.deck_mask
        )

    def play_plainly(self, action: int, out: list[Event]) -> None:
        """:meth:`play` from the rule functions, one step at a time: the tests' yardstick."""
        seat = self.to_act
        assert seat is not None
        self.must_open_oros = False
        self._place(seat, action, out)
        if self.table_mask & ACES_AND_KINGS == ACES_AND_KINGS:
            self._finish()
            return
        self._settle((seat + 1) % self.players, out)

    def _kill(self, between: int, out: list[Event]) -> None:
        """Every card of ``between`` still in a hand goes to that hand's dead pile."""
        for holder in range(self.players):
            newly_dead = self.hands[holder] & between
            if newly_dead:
                self.hands[holder] ^= newly_dead
                self.dead[holder] |= newly_dead
                out.append(cards_dead(holder, newly_dead))

    def _settle(self, seat: int, out: list[Event]) -> None:
        """Find the next seat to act from ``seat`` on: empty hands are skipped silently,
        a seat with no legal card passes automatically. The seat found can play, so its legal
        actions are its playable cards (``_compute_legal`` once the opening 6O is down)."""
        hands, playable, players = self.hands, self.playable, self.players
        while not hands[seat] & playable:
            if hands[seat]:
                out.append(PASSED[True][seat])
            seat = (seat + 1) % players
        self.to_act = seat
        self.legal = hands[seat] & playable
        self.legal_cards = spanish_cards(self.legal)

    def scores(self) -> tuple[Fraction, ...]:
        """RULES.md §2.3 from what each seat placed and lost (see :attr:`placed`), counted
        in a plain loop, cheaper than a comprehension: every hand of every match ends here."""
        dealt, hands, dead_piles = self.dealt, self.hands, self.dead
        dead = []
        placed = []
        for seat in range(self.players):
            lost = dead_piles[seat].bit_count()
            dead.append(lost)
            placed.append(dealt[seat] - hands[seat].bit_count() - lost)
        return score_hand(placed, dead, split=self.split, pool=self.pool)

    def table(self) -> dict[str, Any]:
        return {
            "table": CardSet(self.table_mask),
            "dead": tuple(CardSet(d) for d in self.dead),
            "placed": tuple(self.placed),
        }


def score_hand(
    placed: list[int] | tuple[int, ...],
    dead: list[int] | tuple[int, ...],
    *,
    split: str = "exact",
    pool: str = "all_unplaced",
) -> tuple[Fraction, ...]:
    """RULES.md §2.3: placed cards, the winners' share of the unplaced pool, +5 for a clean hand.

    Each score is built as one fraction from whole numbers (:func:`exact.fraction`): fraction
    arithmetic is slow, and every hand of every match is scored here.
    """
    best = max(placed)
    ways = placed.count(best)  # the winners: every seat that placed the most
    if pool == "all_unplaced":
        unplaced = sum(dead)
    else:
        unplaced = sum([d for p, d in zip(placed, dead, strict=True) if p != best])
    if split != "exact":
        unplaced, ways = unplaced // ways, 1
    # A winner scores p + unplaced / ways (+ 5 when clean) = (p * ways + unplaced (+ 5 * ways)) / ways;
    # the others' whole scores are looked up (exact.WHOLE) rather than made.
    scores = []
    for p, d in zip(placed, dead, strict=True):
        if p == best:
            scores.append(fraction((p + (0 if d else 5)) * ways + unplaced, ways))
        else:
            scores.append(WHOLE[p] if 0 <= p < WHOLE_COUNT else fraction(p, 1))
    return tuple(scores)
