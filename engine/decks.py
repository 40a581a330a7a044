"""The decks of RULES.md in their canonical (pre-shuffle) order, and dealing."""

from __future__ import annotations

from functools import cache
from typing import Final

from .cards import JOKERS, MAX_CARD, OROS, SPANISH_BASE, Card, french, mask_of, spanish

FRENCH_52: Final[tuple[Card, ...]] = tuple(range(52))
"""Suits C D H S, ranks 2 up to A: ids 0..51 in order."""

TRICK_DECK_REMOVED: Final = {3: (french(1, 2),), 4: (), 5: (french(1, 2), french(2, 2))}
"""Red twos removed so that every trick-round hand is the same size (RULES.md §1.1)."""

TRIATHLON_39: Final[tuple[Card, ...]] = (
    *(french(suit, rank) for suit in range(4) for rank in range(6, 15)),
    *JOKERS,
)


_BITS: Final = tuple(1 << card for card in range(MAX_CARD + 1))


@cache
def trick_deck(players: int) -> tuple[Card, ...]:
    removed = TRICK_DECK_REMOVED[players]
    return tuple(c for c in FRENCH_52 if c not in removed)


@cache
def spanish_deck(size: int) -> tuple[Card, ...]:
    """48 cards (ranks 1..12) or 40 (without the 8s and 9s), suits O C E B."""
    ranks = range(1, 13) if size == 48 else (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
    return tuple(spanish(OROS + s, r) for s in range(4) for r in ranks)


def deal(order: tuple[Card, ...] | list[Card], dealer: int, players: int) -> tuple[int, ...]:
    """Card ``k`` of the shuffled deck goes to seat ``(dealer + 1 + k) mod players``.

    Each seat's cards are one slice of the order (every ``players``-th card). The cards are
    distinct, so adding their bits is joining them, and ``sum`` does that without a Python loop.
    """
    hands = [0] * players
    for k in range(players):
        hands[(dealer + 1 + k) % players] = sum(map(_BITS.__getitem__, order[k::players]))
    return tuple(hands)


@cache
def deck_bits(deck: tuple[Card, ...]) -> tuple[tuple[int, ...], int]:
    """``deck`` as the bits of its cards, counted from bit ``shift``: a deck shuffled as these
    numbers instead of its card ids comes out in the same order (the shuffle never looks at
    what it moves), and each hand is then the sum of its slice (:func:`deal_bits`). A Spanish
    deck's bits count from its first card, so that a hand sums in machine-word integers."""
    shift = SPANISH_BASE if deck and min(deck) >= SPANISH_BASE else 0
    return tuple([1 << (card - shift) for card in deck]), shift


def deal_bits(order: list[int], shift: int, dealer: int, players: int) -> tuple[int, ...]:
    """:func:`deal` of a deck shuffled as its :func:`deck_bits`: the same hands, from the
    same shuffle, without looking a bit up for each card."""
    hands = [0] * players
    for k in range(players):
        hands[(dealer + 1 + k) % players] = sum(order[k::players]) << shift
    return tuple(hands)


def hand_sizes(deck_size: int, dealer: int, players: int) -> tuple[int, ...]:
    """How many cards each seat gets: the first ``deck_size mod n`` after the dealer get one more."""
    base, extra = divmod(deck_size, players)
    return tuple(
        base + (1 if (seat - dealer - 1) % players < extra else 0) for seat in range(players)
    )


@cache
def deck_mask(order: tuple[Card, ...]) -> int:
    return mask_of(order)
