"""Cards, decks, the fair-deal stream and the scoring of rounds, written from RULES.md (not
from the engine), for the property tests to check the engine against.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from fractions import Fraction

# -- cards, decks and the fair-deal stream, written from RULES.md (not from the engine) --------

JOKERS = (52, 53, 54)
JOKER_MASK = (1 << 52) | (1 << 53) | (1 << 54)
SPANISH_BASE = 64
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
MULTIPLES_OF_THREE = frozenset({3, 6, 9, 12})
FEATS = ("last", "middle", "multiple")


def french(suit: int, rank: int) -> int:
    """French card id: ``suit * 13 + rank - 2`` with ranks 2..14 (ace 14)."""
    return suit * 13 + rank - 2


def spanish(suit_index: int, rank: int) -> int:
    """Spanish card id: suit index 0..3 (O C E B), ranks 1..12."""
    return SPANISH_BASE + suit_index * 12 + rank - 1


def mask(cards: Sequence[int]) -> int:
    out = 0
    for card in cards:
        out |= 1 << card
    return out


def cards_in(m: int) -> list[int]:
    return [c for c in range(m.bit_length()) if m >> c & 1]


def fan_tan_rank(card: int) -> int:
    """Ace low: A=1 … K=13 (RULES.md §1.1)."""
    index = card % 13
    return 1 if index == 12 else index + 2


def spanish_suit(card: int) -> int:
    return (card - SPANISH_BASE) // 12


def spanish_rank(card: int) -> int:
    return (card - SPANISH_BASE) % 12 + 1


SEVEN_OF_HEARTS = french(HEARTS, 7)
QUEEN_OF_CLUBS = french(CLUBS, 12)
QUEENS = mask([french(s, 12) for s in range(4)])
CLUBS_MASK = mask([french(CLUBS, r) for r in range(2, 15)])
SIX_OF_OROS = spanish(0, 6)
SPANISH_ACES_AND_KINGS = mask([spanish(s, r) for s in range(4) for r in (1, 12)])


def french_suit_mask(suit: int) -> int:
    return mask([french(suit, r) for r in range(2, 15)])


class Stream:
    """RULES.md §4: blocks ``SHA-256(seed || label || 0x00 || i)``, 32-bit rejection sampling."""

    def __init__(self, seed: bytes, label: str) -> None:
        self.prefix = seed + label.encode("ascii") + b"\x00"
        self.block = 0
        self.buffer = b""

    def uniform(self, k: int) -> int:
        limit = 2**32 - 2**32 % k
        while True:
            while len(self.buffer) < 4:
                self.buffer += hashlib.sha256(self.prefix + self.block.to_bytes(8, "big")).digest()
                self.block += 1
            x = int.from_bytes(self.buffer[:4], "big")
            self.buffer = self.buffer[4:]
            if x < limit:
                return x % k

    def shuffle(self, deck: Sequence[int]) -> list[int]:
        out = list(deck)
        for i in range(len(out) - 1, 0, -1):
            j = self.uniform(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def reference_deal(seed: bytes, index: int, deck: Sequence[int], dealer: int, n: int) -> list[int]:
    order = Stream(seed, f"deal/{index}").shuffle(deck)
    hands = [0] * n
    for k, card in enumerate(order):
        hands[(dealer + 1 + k) % n] |= 1 << card
    return hands


def trick_winner(trick: Sequence[int], trump: int | None) -> int:
    """Index of the winning card (RULES.md §1.2.3, §3.3): a led Joker wins; else the highest
    trump; else the highest card of the led suit. Ids grow with rank within a suit."""
    if trick[0] in JOKERS:
        return 0
    trumps = [i for i, c in enumerate(trick) if c < 52 and trump is not None and c // 13 == trump]
    if trumps:
        return max(trumps, key=lambda i: trick[i])
    led = trick[0] // 13
    return max(
        (i for i, c in enumerate(trick) if c < 52 and c // 13 == led), key=lambda i: trick[i]
    )


def sixes_scores(
    placed: Sequence[int], dead: Sequence[int], *, split: str, pool: str
) -> tuple[Fraction, ...]:
    """RULES.md §2.3 and §2.4."""
    best = max(placed)
    winners = [s for s, x in enumerate(placed) if x == best]
    unplaced = (
        sum(dead)
        if pool == "all_unplaced"
        else sum(d for s, d in enumerate(dead) if s not in winners)
    )
    share = (
        Fraction(unplaced, len(winners)) if split == "exact" else Fraction(unplaced // len(winners))
    )
    return tuple(
        Fraction(x) + ((share + (5 if dead[s] == 0 else 0)) if s in winners else 0)
        for s, x in enumerate(placed)
    )


def triathlon_feats(tricks: Sequence[int], last: int, *, zero: bool) -> tuple[tuple[str, ...], ...]:
    """RULES.md §3.4: F1 multiple of three, F2 last trick, F3 middle (or odd one out)."""
    multiples = MULTIPLES_OF_THREE | ({0} if zero else set())
    if len(set(tricks)) == 3:
        middle = sorted(range(3), key=lambda s: tricks[s])[1]
    else:
        middle = next(s for s in range(3) if list(tricks).count(tricks[s]) == 1)
    out = []
    for seat, t in enumerate(tricks):
        f = {"multiple"} if t in multiples else set()
        if seat == last:
            f.add("last")
        if seat == middle:
            f.add("middle")
        out.append(tuple(sorted(f)))
    return tuple(out)


def triathlon_scores(tricks: Sequence[int], feats: Sequence[Sequence[str]]) -> tuple[Fraction, ...]:
    bonus = 10 if any("multiple" in f for f in feats) else 20
    return tuple(
        Fraction(
            t
            + 10 * ("multiple" in f)
            + 10 * ("last" in f)
            + bonus * ("middle" in f)
            + 100 * (len(f) == 3)
        )
        for t, f in zip(tricks, feats, strict=True)
    )
