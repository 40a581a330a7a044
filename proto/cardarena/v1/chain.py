"""The hash chain of a match log, shared by the server's store and every auditor.

Each stored event's hash is ``SHA-256(previous hash || event bytes)``; the first previous hash
is ``SHA-256("cardarena-log-v1" || match_id)``, which binds the chain to its match.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Final, Protocol

GENESIS_DOMAIN: Final = b"cardarena-log-v1"


class Chained(Protocol):
    """What a log entry must carry to be checked: its seq, exact bytes and hash."""

    @property
    def seq(self) -> int: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def hash(self) -> bytes: ...


def genesis_hash(match_id: str) -> bytes:
    """The previous hash of a match's first event."""
    return hashlib.sha256(GENESIS_DOMAIN + match_id.encode()).digest()


def chain_hash(prev_hash: bytes, payload: bytes) -> bytes:
    return hashlib.sha256(prev_hash + payload).digest()


def first_break(match_id: str, entries: Sequence[Chained]) -> int | None:
    """Recompute a whole log from its bytes; return the position (from 1) of the first entry
    whose seq is not its position or whose hash is wrong, or ``None`` if every one holds.

    A truncated tail cannot be seen from the entries alone: compare with a trusted last seq.
    """
    prev = genesis_hash(match_id)
    for n, entry in enumerate(entries, start=1):
        expected = chain_hash(prev, entry.payload)
        if entry.seq != n or entry.hash != expected:
            return n
        prev = expected
    return None


def first_break_of(match_id: str, entries: Iterable[tuple[int, bytes, bytes]]) -> int | None:
    """:func:`first_break` over ``(seq, event bytes, hash)`` triples: the auditor's loop, one
    SHA-256 per entry and nothing else (no object made per entry)."""
    sha256 = hashlib.sha256
    prev = genesis_hash(match_id)
    n = 0
    for n, (seq, payload, digest) in enumerate(entries, start=1):
        prev = sha256(prev + payload).digest()
        if seq != n or digest != prev:
            return n
    return None
