"""A bounded cache of answers that never change again, least recently read dropped first.

Why one mechanism: an ended match's log and its line in a list of matches, and a final
tournament's results and match lines, are each made once and then read again and again by
anyone (:mod:`.api.kept`, :mod:`.tournaments.finals`). Each is kept as the bytes sent (or,
for a tournament's lines, a run of them with where each ends), bounded by the bytes they hold.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sized
from typing import Generic, TypeVar

LARGEST_SHARE = 8
"""A value larger than ``1 / LARGEST_SHARE`` of the bound is not kept: one huge answer must
not push out every other."""

V = TypeVar("V", bound=Sized)


class Kept(Generic[V]):
    """Values by key, at most ``max_bytes`` of them together (a value's ``len`` is its
    bytes), the least recently read dropped first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._kept: OrderedDict[Hashable, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: Hashable) -> V | None:
        value = self._kept.get(key)
        if value is not None:
            self._kept.move_to_end(key)
        return value

    def keep(self, key: Hashable, value: V) -> None:
        """Keep ``value`` (a key kept already keeps its first value: what is kept is final)."""
        if len(value) > self.max_bytes // LARGEST_SHARE or key in self._kept:
            return
        self._kept[key] = value
        self.size += len(value)
        while self.size > self.max_bytes:
            _, dropped = self._kept.popitem(last=False)
            self.size -= len(dropped)


KeptBytes = Kept[bytes]
"""Serialized answers by key (a match id, a tournament id)."""
