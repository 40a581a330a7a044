"""A bounded queue for one reader: what a stream's subscriber waits on.

Why not :class:`asyncio.Queue`: every action puts a message or two on the queue of every open
stream of its match, so this is the hottest queue in the server, and ``asyncio.Queue`` pays on
each put and get for what a stream never uses: several getters and putters, each with a
future of its own, and ``join``'s bookkeeping (a counter and an :class:`asyncio.Event` touched
on every put). One reader means one waiter at most: a deque and that waiter's future are the
whole queue. The interface is ``asyncio.Queue``'s, as far as a stream uses it, with the same
exceptions, so either fits where the other did.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class Mailbox(Generic[T]):
    """At most ``maxsize`` items, taken in order by one reader at a time."""

    __slots__ = ("_items", "_maxsize", "_waiter")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("a mailbox holds at least one item")
        self._items: deque[T] = deque()
        self._maxsize = maxsize
        self._waiter: asyncio.Future[None] | None = None

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: T) -> None:
        """Add ``item``, waking the reader if it waits; :class:`asyncio.QueueFull` when full."""
        if len(self._items) >= self._maxsize:
            raise asyncio.QueueFull
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def get_nowait(self) -> T:
        """The next item; :class:`asyncio.QueueEmpty` when there is none."""
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def get(self) -> T:
        """The next item, once there is one. A second reader waiting at the same time is a
        bug in the caller, refused rather than left waiting for ever."""
        while not self._items:
            if self._waiter is not None:
                raise RuntimeError("a mailbox has one reader at a time")
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:  # cancelled before anything came
                    self._waiter = None
        return self._items.popleft()
