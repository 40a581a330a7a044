"""The answers to ``GetMatchLog`` for ended matches, kept as the bytes sent.

Why: an ended match's log, its seed and its signed checkpoint never change, yet each read
built a message per event and serialized them all on the event loop the players wait for
(3-8 ms a read for a Hexathlon match), and a match no longer in memory was first replayed
through the engine. Readers of a finished competition ask for the same logs again and
again. Kept here, a read is a dictionary lookup and the bytes go out as they are (the
handlers' serializer passes bytes through: ``wire._as_bytes``). Only what is final is kept:
an ended match whose group no longer holds it back (the embargo only ever lifts) and whose
checkpoint is signed. Bounded in bytes, the least recently read dropped first.
"""

from __future__ import annotations

from collections import OrderedDict

ENDED_LOG_BYTES = 32 << 20
"""The bytes kept at most, every log's together."""

LARGEST_SHARE = 8
"""A log larger than ``1 / LARGEST_SHARE`` of the bound is not kept: one huge log must not
push out every other."""


class EndedLogs:
    """Serialized ``GetMatchLogResponse`` messages by match id, least recently read first."""

    def __init__(self, max_bytes: int = ENDED_LOG_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._logs: OrderedDict[str, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._logs)

    def get(self, match_id: str) -> bytes | None:
        data = self._logs.get(match_id)
        if data is not None:
            self._logs.move_to_end(match_id)
        return data

    def keep(self, match_id: str, data: bytes) -> None:
        if len(data) > self.max_bytes // LARGEST_SHARE or match_id in self._logs:
            return
        self._logs[match_id] = data
        self.size += len(data)
        while self.size > self.max_bytes:
            _, dropped = self._logs.popitem(last=False)
            self.size -= len(dropped)
