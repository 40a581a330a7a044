"""Entrants: who holds which key, who is connected, and the matches each is told about.

An entrant connects with its key to one stream (``Enter``) and is told every match it is
seated in, with the seat's token: first the ones already running, then each new one as it
starts. It may connect more than once (a reconnect can overlap the old stream); each stream
has a bounded queue and is dropped if it stops reading, so no entrant can hold the director up.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import Throttled

LINK_QUEUE = 256
"""What a connected entrant may have waiting unread before its stream is dropped."""
MAX_LINKS = 8
"""Streams one entrant may have open at once (a reconnect may overlap the old stream)."""


def derive(secret: bytes, label: str) -> str:
    """A secret of a tournament's own (seat tokens, join and creator secrets of its matches,
    the keys it draws, its matches' request ids): from its stored secret, so the same after a
    restart or a retried create, and known to nobody else (43 URL-safe characters)."""
    digest = hmac.new(secret, label.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def drawn_key(secret: bytes, entrant: int) -> str:
    return derive(secret, f"key/{entrant}")


def key_hash(key: str) -> bytes:
    return hashlib.sha256(b"cardarena-entrant-key-v1" + key.encode()).digest()


def entrant_of(key_hashes: Sequence[str], key: str) -> int | None:
    """Which entrant ``key`` belongs to: every hash compared, in constant time each."""
    offered = key_hash(key)
    found = None
    for index, digest in enumerate(key_hashes):
        if hmac.compare_digest(bytes.fromhex(digest), offered):
            found = index
    return found


T = TypeVar("T")
"""What an entrant's stream carries (a tournament's EnterResponse, a ladder's)."""


@dataclass(eq=False)
class Link(Generic[T]):
    """One connected stream of one entrant."""

    entrant: int
    queue: asyncio.Queue[T | None]
    dropped: bool = False

    def offer(self, item: T | None) -> None:
        if self.dropped:
            return
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:  # it stopped reading: end its stream
            self.dropped = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)


class Links(Generic[T]):
    """Every connected stream of a tournament's (or a ladder's) entrants."""

    def __init__(self, entrants: int) -> None:
        self.by_entrant: list[set[Link[T]]] = [set() for _ in range(entrants)]

    def connect(self, entrant: int) -> Link[T]:
        """A new stream of ``entrant``; :class:`Throttled` past :data:`MAX_LINKS`."""
        if len(self.by_entrant[entrant]) >= MAX_LINKS:
            raise Throttled(
                f"this entrant has {MAX_LINKS} streams open already: close one first", 1000
            )
        link: Link[T] = Link(entrant, asyncio.Queue(LINK_QUEUE))
        self.by_entrant[entrant].add(link)
        return link

    def disconnect(self, link: Link[T]) -> bool:
        """Forget ``link``; whether that was the entrant's last connection."""
        links = self.by_entrant[link.entrant]
        links.discard(link)
        return not links

    def connected(self, entrant: int) -> bool:
        return bool(self.by_entrant[entrant])

    def tell(self, entrant: int, item: T) -> None:
        for link in list(self.by_entrant[entrant]):
            link.offer(item)

    def close(self, last: T) -> None:
        """The tournament ended: say so on every stream, then end them."""
        for links in self.by_entrant:
            for link in list(links):
                link.offer(last)
                link.offer(None)
