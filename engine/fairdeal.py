"""The fair-deal random stream of RULES.md §4, bit for bit.

Everything random in a match comes from its 32-byte seed through labelled streams, so any
program in any language can recompute every deal from the seed alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final, TypeVar

T = TypeVar("T")

SEED_SIZE: Final = 32
COMMITMENT_PREFIX: Final = b"cardarena-seed-v1"


def check_seed(seed: bytes) -> bytes:
    if not isinstance(seed, bytes | bytearray) or len(seed) != SEED_SIZE:
        raise ValueError(f"a seed is exactly {SEED_SIZE} bytes")
    return bytes(seed)


class RandomStream:
    """``stream(seed, label)``: the blocks ``SHA-256(seed || label || 0x00 || i)``, ``i = 0, 1, …``."""

    __slots__ = ("_buffer", "_next_block", "_prefix")

    def __init__(self, seed: bytes, label: str) -> None:
        self._prefix = check_seed(seed) + label.encode("ascii") + b"\x00"
        self._next_block = 0
        self._buffer = b""

    def block(self, index: int) -> bytes:
        return hashlib.sha256(self._prefix + index.to_bytes(8, "big")).digest()

    def read(self, count: int) -> bytes:
        while len(self._buffer) < count:
            self._buffer += self.block(self._next_block)
            self._next_block += 1
        out, self._buffer = self._buffer[:count], self._buffer[count:]
        return out

    def uniform(self, k: int) -> int:
        """A uniform integer in ``[0, k)`` by rejection sampling on 32-bit words."""
        if k < 1:
            raise ValueError("uniform(k) needs k >= 1")
        limit = 2**32 - (2**32 % k)
        while True:
            x = int.from_bytes(self.read(4), "big")
            if x < limit:
                return x % k

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """Fisher-Yates from the top: for ``i`` from ``len-1`` down to 1 swap ``i`` and ``uniform(i+1)``."""
        deck = list(items)
        for i in range(len(deck) - 1, 0, -1):
            j = self.uniform(i + 1)
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
