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
MIX_PREFIX: Final = b"cardarena-mix-v1"
_TWO_32: Final = 2**32
_SAFE: Final = _TWO_32 - 2**16
"""Below this a word is accepted by ``uniform(k)`` for every ``k <= 2**16``, any deck's size."""


_INDEX_BYTES: Final = tuple(index.to_bytes(8, "big") for index in range(64))
"""The first block indices as the 8 bytes that a block hashes (a stream reads a handful)."""


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
        words = self._words
        if not words:
            self._queue(1)
        return words.pop()

    def _queue(self, count: int) -> None:
        """Queue at least ``count`` more words behind the queued ones, in whole blocks.

        Why: a shuffle reads about one word per card; hashing and unpacking its blocks in one
        go, then popping, costs a fraction of a method call per word.
        """
        first = self._next_block
        blocks = -(-count // 8)
        if type(self) is RandomStream and first + blocks <= len(_INDEX_BYTES):
            # block(i) written out, its index's bytes looked up: a deal hashes six or seven.
            prefix, sha256 = self._prefix, hashlib.sha256
            data = b"".join(
                [sha256(prefix + _INDEX_BYTES[i]).digest() for i in range(first, first + blocks)]
            )
        else:  # a subclass may make its own blocks
            data = b"".join([self.block(i) for i in range(first, first + blocks)])
        # The queue is read from its end: the bytes reversed, read little-endian, are the
        # stream's big-endian words in reverse order.
        self._words[:0] = struct.unpack(f"<{8 * blocks}I", data[::-1])
        self._next_block = first + blocks

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
        if len(deck) > 2**16:
            raise ValueError("shuffle takes at most 2**16 items")
        words = self._words
        if len(words) < len(deck) - 1:
            self._queue(len(deck) - 1 - len(words))  # one word per swap, rejections aside
        last = len(words) - (len(deck) - 1)
        if len(deck) > 1 and max(words[last:]) < _SAFE:
            # No word of this shuffle can be rejected (the usual case): take them all at
            # once, in the stream's order, and swap.
            drawn = words[last:]
            del words[last:]
            drawn.reverse()
            i = len(deck)
            for x in drawn:
                j = x % i  # uniform(i), then the position it is swapped with
                i -= 1
                deck[i], deck[j] = deck[j], deck[i]
            return deck
        pop, word = words.pop, self.word
        for i in range(len(deck) - 1, 0, -1):
            # uniform(i + 1), inlined: no word below _SAFE is ever rejected, so the exact
            # limit is only worked out above it.
            try:
                x = pop()
            except IndexError:  # only after a rejection
                x = word()
            if x >= _SAFE:
                while x >= _TWO_32 - _TWO_32 % (i + 1):
                    x = word()
            j = x % (i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        return deck


_TOP: Final = b"\xff\xff"
"""The first two bytes of every word at or above :data:`_SAFE`, which ``uniform`` may reject."""
_BLOCK_WORDS: Final = tuple(struct.Struct(f">{8 * blocks}I") for blocks in range(10))
"""``_BLOCK_WORDS[b].unpack``: ``b`` whole blocks as their words, in the stream's order."""


def shuffled(seed: bytes, label: str, items: Sequence[T]) -> list[T]:
    """``RandomStream(seed, label).shuffle(items)``: the shuffle of a stream's first words.

    Why: a deal shuffles a fresh stream and reads nothing more from it. Its words are then
    the first blocks, unpacked in order, with no queue to keep for later reads; a word that
    some ``uniform`` could reject (one in 65,536), found by its first bytes, sends the
    shuffle the general way.
    """
    deck = list(items)
    size = len(deck)
    blocks = (size + 6) // 8  # one word per swap, size - 1 of them
    if size < 2 or blocks >= len(_BLOCK_WORDS):
        return RandomStream(seed, label).shuffle(deck)
    prefix, sha256 = check_seed(seed) + label.encode("ascii") + b"\x00", hashlib.sha256
    data = b"".join([sha256(prefix + _INDEX_BYTES[i]).digest() for i in range(blocks)])
    if _TOP in data:  # a word at or above _SAFE begins so (and a few others hold it)
        return RandomStream(seed, label).shuffle(deck)
    i = size
    for x in _BLOCK_WORDS[blocks].unpack(data)[: size - 1]:
        j = x % i  # uniform(i), then the position it is swapped with
        i -= 1
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def commitment(seed: bytes) -> str:
    """``SHA-256("cardarena-seed-v1" || seed)`` in hex: published at creation, checked at the end."""
    return hashlib.sha256(COMMITMENT_PREFIX + check_seed(seed)).hexdigest()


def mix_seed(seed: bytes, contributions: Sequence[bytes | None]) -> bytes:
    """The seed mixed with contributed entropy (RULES.md §4, "Contributed entropy"):
    ``SHA-256("cardarena-mix-v1" || seed || c_0 || … || c_{n-1})``, a contributor that gave
    none (``None``) read as 32 zero bytes; the seed itself when nobody contributed, so that a
    match (or tournament) without contributions deals from its own seed."""
    check_seed(seed)
    if all(c is None for c in contributions):
        return bytes(seed)
    for number, contribution in enumerate(contributions):
        if contribution is not None and len(contribution) != SEED_SIZE:
            raise ValueError(
                f"contribution {number} has {len(contribution)} bytes, not {SEED_SIZE}"
            )
    joined = b"".join(bytes(SEED_SIZE) if c is None else bytes(c) for c in contributions)
    return hashlib.sha256(MIX_PREFIX + seed + joined).digest()


def deal_label(round_index: int) -> str:
    return f"deal/{round_index}"


def trump_label(round_index: int) -> str:
    return f"trump/{round_index}"


DEALER_LABEL: Final = "dealer"
