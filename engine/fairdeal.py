"""The fair-deal random stream of RULES.md §4, bit for bit.

Everything random in a match comes from its 32-byte seed through labelled streams, so any
program in any language can recompute every deal from the seed alone.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Final, TypeVar

T = TypeVar("T")

SEED_SIZE: Final = 32
COMMITMENT_PREFIX: Final = b"cardarena-seed-v1"
_EIGHT_WORDS: Final = struct.Struct(">8I")
_TWO_32: Final = 2**32


def check_seed(seed: bytes) -> bytes:
    if not isinstance(seed, bytes | bytearray) or len(seed) != SEED_SIZE:
        raise ValueError(f"a seed is exactly {SEED_SIZE} bytes")
    return bytes(seed)


class RandomStream:
    """``stream(seed, label)``: the blocks ``SHA-256(seed || label || 0x00 || i)``, ``i = 0, 1, …``.

    Every read is a whole 32-bit word and a block holds exactly eight, so the stream is kept
    as a queue of words: reading words in order is reading the stream's bytes in order.
    """

    __slots__ = ("_next_block", "_prefix", "_words")

    def __init__(self, seed: bytes, label: str) -> None:
        self._prefix = check_seed(seed) + label.encode("ascii") + b"\x00"
        self._next_block = 0
        self._words: list[int] = []

    def block(self, index: int) -> bytes:
        return hashlib.sha256(self._prefix + index.to_bytes(8, "big")).digest()

    def word(self) -> int:
        """The next 4 bytes of the stream as an unsigned 32-bit big-endian integer."""
        if not self._words:
            self._words = list(_EIGHT_WORDS.unpack(self.block(self._next_block)))
            self._words.reverse()
            self._next_block += 1
        return self._words.pop()

    def read(self, count: int) -> bytes:
        """The next ``count`` bytes, ``count`` a multiple of 4 (the stream is read in words)."""
        if count % 4:
            raise ValueError("the stream is read in whole 32-bit words")
        return b"".join(self.word().to_bytes(4, "big") for _ in range(count // 4))

    def uniform(self, k: int) -> int:
        """A uniform integer in ``[0, k)`` by rejection sampling on 32-bit words."""
        if k < 1:
            raise ValueError("uniform(k) needs k >= 1")
        limit = _TWO_32 - _TWO_32 % k
        while True:
            x = self.word()
            if x < limit:
                return x % k

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """Fisher-Yates from the top: for ``i`` from ``len-1`` down to 1, swap ``i`` and ``uniform(i+1)``."""
        deck = list(items)
        word = self.word
        for i in range(len(deck) - 1, 0, -1):
            k = i + 1
            limit = _TWO_32 - _TWO_32 % k
            x = word()
            while x >= limit:  # uniform(k), inlined: dealing is on every round's path
                x = word()
            j = x % k
            deck[i], deck[j] = deck[j], deck[i]
        return deck


def commitment(seed: bytes) -> str:
    """``SHA-256("cardarena-seed-v1" || seed)`` in hex: published at creation, checked at the end."""
    return hashlib.sha256(COMMITMENT_PREFIX + check_seed(seed)).hexdigest()


def deal_label(round_index: int) -> str:
    return f"deal/{round_index}"


def trump_label(round_index: int) -> str:
    return f"trump/{round_index}"


DEALER_LABEL: Final = "dealer"
