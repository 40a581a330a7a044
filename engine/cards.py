"""Cards as small integers and sets of cards as integer bitmasks.

Every card of every deck has one global id, so a card never needs its deck to be named:

* French cards ``0..51``: ``suit * 13 + rank_index``, suits ``C D H S``, ranks ``2..A``
  (rank index 0 is the two, 12 the ace), so within a suit a larger id is a higher card
  when the ace is high.
* Jokers ``52..54`` (Triathlon has three; they are interchangeable).
* Spanish cards ``64..111``: ``64 + (suit - 4) * 12 + (rank - 1)``, suits ``O C E B``
  (global suit numbers 4..7), ranks ``1..12``.

A set of cards is an ``int`` whose bit ``c`` is set when card ``c`` is in it; the rules work on
these masks directly. :class:`CardSet` wraps a mask for everything a person reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

Card = int
Suit = int

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
OROS, COPAS, ESPADAS, BASTOS = 4, 5, 6, 7
JOKER_SUIT: Final = 8

FRENCH_SUITS: Final = (CLUBS, DIAMONDS, HEARTS, SPADES)
SPANISH_SUITS: Final = (OROS, COPAS, ESPADAS, BASTOS)
FRENCH_SUIT_CODES: Final = "CDHS"
SPANISH_SUIT_CODES: Final = "OCEB"
FRENCH_RANK_CODES: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUIT_NAMES: Final = (
    "clubs",
    "diamonds",
    "hearts",
    "spades",
    "oros",
    "copas",
    "espadas",
    "bastos",
    "jokers",
)

JOKERS: Final = (52, 53, 54)
JOKER_MASK: Final = (1 << 52) | (1 << 53) | (1 << 54)
SPANISH_BASE: Final = 64
MAX_CARD: Final = SPANISH_BASE + 48 - 1


def french(suit: Suit, rank: int) -> Card:
    """The French card of ``suit`` and ``rank`` (2..14, the ace being 14)."""
    return suit * 13 + rank - 2


def spanish(suit: Suit, rank: int) -> Card:
    """The Spanish card of global ``suit`` (4..7) and ``rank`` (1..12)."""
    return SPANISH_BASE + (suit - OROS) * 12 + rank - 1


def is_card(card: int) -> bool:
    """True for any id that names a real card of some deck."""
    return 0 <= card <= 54 or SPANISH_BASE <= card <= MAX_CARD


def suit_of(card: Card) -> Suit:
    if card < 52:
        return card // 13
    if card < SPANISH_BASE:
        return JOKER_SUIT
    return OROS + (card - SPANISH_BASE) // 12


def rank_of(card: Card) -> int:
    """The rank as printed on the card: 2..14 for French (ace 14), 1..12 for Spanish, 0 joker."""
    if card < 52:
        return card % 13 + 2
    if card < SPANISH_BASE:
        return 0
    return (card - SPANISH_BASE) % 12 + 1


def is_joker(card: Card) -> bool:
    return 52 <= card <= 54


def card_code(card: Card) -> str:
    """The text code of RULES.md: ``QC``, ``10H``, ``6O``, ``JK``."""
    if card < 52:
        return FRENCH_RANK_CODES[card % 13] + FRENCH_SUIT_CODES[card // 13]
    if card < SPANISH_BASE:
        return "JK"
    offset = card - SPANISH_BASE
    return f"{offset % 12 + 1}{SPANISH_SUIT_CODES[offset // 12]}"


def suit_code(suit: Suit) -> str:
    if suit < 4:
        return FRENCH_SUIT_CODES[suit]
    if suit < 8:
        return SPANISH_SUIT_CODES[suit - OROS]
    return "JK"


def parse_suit(code: str) -> Suit:
    """A French suit letter (``C D H S``), as trump choices name them."""
    index = FRENCH_SUIT_CODES.find(code.strip().upper())
    if len(code.strip()) != 1 or index < 0:
        raise ValueError(f"unknown suit {code!r}: expected one of C, D, H, S")
    return index


def parse_card(code: str, *, spanish_deck: bool = False) -> Card:
    """Parse a card code; ``spanish_deck`` says how to read ``C`` (copas rather than clubs)."""
    text = code.strip().upper()
    if text == "JK":
        return JOKERS[0]
    if len(text) < 2:
        raise ValueError(f"malformed card code {code!r}")
    rank_text, suit_text = text[:-1], text[-1]
    if spanish_deck:
        suit_index = SPANISH_SUIT_CODES.find(suit_text)
        if suit_index < 0 or not rank_text.isdigit() or not 1 <= int(rank_text) <= 12:
            raise ValueError(f"malformed Spanish card code {code!r}: ranks 1..12, suits O C E B")
        return spanish(OROS + suit_index, int(rank_text))
    suit_index = FRENCH_SUIT_CODES.find(suit_text)
    if suit_index < 0 or rank_text not in FRENCH_RANK_CODES:
        raise ValueError(f"malformed card code {code!r}: ranks 2..10 J Q K A, suits C D H S")
    return suit_index * 13 + FRENCH_RANK_CODES.index(rank_text)


def mask_of(cards: Iterable[Card]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def _block_table(width: int, base: int) -> tuple[tuple[Card, ...], ...]:
    """For a block of ``width`` bits (one suit) from card id ``base``: the card ids of each bit
    pattern ``p``, at ``[p]``. Legal-move lists are the engine's hottest allocation, and these
    tables turn one into a few lookups."""
    table: list[tuple[Card, ...]] = [()]
    for p in range(1, 1 << width):
        # p's cards: its lowest bit's card, then those of p without that bit.
        table.append((base + (p & -p).bit_length() - 1, *table[p & (p - 1)]))
    return tuple(table)


_CLUBS, _DIAMONDS, _HEARTS, _SPADES = (_block_table(13, 13 * suit) for suit in range(4))
_OROS, _COPAS, _ESPADAS, _BASTOS = (_block_table(12, SPANISH_BASE + 12 * s) for s in range(4))
_JOKER_BLOCK = _block_table(3, JOKERS[0])
FRENCH_ONLY: Final = 1 << 52
"""Masks below this hold French cards only; ``cards_of`` reads them suit by suit from these:"""
FRENCH_CARD_LISTS: Final = (_CLUBS, _DIAMONDS, _HEARTS, _SPADES)
SPANISH_CARD_LISTS: Final = (_OROS, _COPAS, _ESPADAS, _BASTOS)
"""The same for the Spanish suits, each a 12-bit block from bit 64 (``mask >> 64``)."""
_FRENCH_AND_JOKERS: Final = 1 << 55
SPANISH_ONLY: Final = 1 << 112
"""Masks below this with no bit under 64 hold Spanish cards only."""


def cards_of(mask: int) -> list[Card]:
    """The cards (or action ids) of ``mask`` in ascending order: the fixed card order."""
    if mask < FRENCH_ONLY:
        return [
            *_CLUBS[mask & 8191],
            *_DIAMONDS[mask >> 13 & 8191],
            *_HEARTS[mask >> 26 & 8191],
            *_SPADES[mask >> 39],
        ]
    if mask < _FRENCH_AND_JOKERS:  # Triathlon's deck
        return [
            *_CLUBS[mask & 8191],
            *_DIAMONDS[mask >> 13 & 8191],
            *_HEARTS[mask >> 26 & 8191],
            *_SPADES[mask >> 39 & 8191],
            *_JOKER_BLOCK[mask >> 52],
        ]
    spanish = mask >> SPANISH_BASE
    if mask < SPANISH_ONLY and spanish << SPANISH_BASE == mask:
        return [
            *_OROS[spanish & 4095],
            *_COPAS[spanish >> 12 & 4095],
            *_ESPADAS[spanish >> 24 & 4095],
            *_BASTOS[spanish >> 36],
        ]
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def lowest(mask: int) -> Card:
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> Card:
    return mask.bit_length() - 1


def suit_mask(suit: Suit) -> int:
    """Every card of ``suit`` (the jokers for :data:`JOKER_SUIT`)."""
    if suit < 4:
        return 0x1FFF << (13 * suit)
    if suit < 8:
        return 0xFFF << (SPANISH_BASE + 12 * (suit - OROS))
    return JOKER_MASK


SUIT_MASKS: Final = tuple(suit_mask(s) for s in range(9))


def parse_cards(codes: str, *, spanish_deck: bool = False) -> int:
    """A mask from space-separated codes, e.g. ``"4H 10H 6S"``."""
    return mask_of(parse_card(c, spanish_deck=spanish_deck) for c in codes.split())


@dataclass(frozen=True, slots=True)
class CardSet:
    """An immutable set of cards: a readable face on a bitmask.

    Iterates in ascending id order, which is the fixed card order used for sorting legal
    actions and picking default moves.
    """

    mask: int = 0

    @classmethod
    def of(cls, cards: Iterable[Card]) -> CardSet:
        return cls(mask_of(cards))

    @classmethod
    def parse(cls, codes: str, *, spanish_deck: bool = False) -> CardSet:
        return cls(parse_cards(codes, spanish_deck=spanish_deck))

    def __iter__(self) -> Iterator[Card]:
        return iter(cards_of(self.mask))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return isinstance(card, int) and card >= 0 and bool(self.mask >> card & 1)

    def __bool__(self) -> bool:
        return self.mask != 0

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def codes(self) -> list[str]:
        return [card_code(c) for c in cards_of(self.mask)]

    def __str__(self) -> str:
        return " ".join(self.codes())

    def __repr__(self) -> str:
        return f"CardSet({str(self)!r})"
