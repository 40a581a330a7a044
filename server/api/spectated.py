"""A match's log as one reader may see it; for its spectators, made once for all of them.

Why: every spectator sees the same projection of every entry (no seat's cards, no private
pass or fault), but each new stream used to read the whole log from the store, parse every
entry, project it and serialize it again: about 0.6 ms of the event loop for a 300-entry
Hexathlon log, per stream. When a watched match ends, every one of its spectators opens a
stream on the next within a fraction of a second, and the flood benchmark found the players'
p99 several times its quiet figure in the windows where that happened most. Here the
entries are read and projected once, each kept as a :class:`Told` whose message bytes are
made once and sent to every spectator (``Told.wire``), and each later stream reads only what
was appended since. The history is dropped when the match's last spectator leaves, so memory
grows only with the matches being watched. A seat sees its own cards: its stream reads the
entries it asked for the same way, for itself alone, and drops them once sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from cardarena.v1 import game_pb2 as pb

from ..hosting import HostedMatch, PbProjector, Told, project_for


@dataclass(eq=False)
class ProjectedLog:
    """Entries 1.. of one match as its spectators see it (``told[i]`` holds seq ``i + 1``)."""

    told: list[Told] = field(default_factory=list)
    projector: PbProjector = field(default_factory=PbProjector)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    watchers: int = 0

    async def between(self, hosted: HostedMatch, after_seq: int, seq: int) -> list[Told]:
        """The entries after ``after_seq`` up to ``seq``: read from the store only past what
        an earlier stream read (one reader at a time, so an entry is projected once)."""
        if after_seq >= seq:
            return []
        async with self.lock:
            self.projector.jokers = hosted.readers.jokers
            have = len(self.told)
            if have < seq:
                self.told += await projected(hosted, None, self.projector, have, seq)
        return self.told[after_seq:seq]


async def seat_history(
    hosted: HostedMatch, seat: int | None, after_seq: int, seq: int
) -> list[Told]:
    """The entries after ``after_seq`` up to ``seq`` as ``seat`` sees them, for one stream:
    read from ``after_seq`` on, not from the log's start (a seat resuming a long match a few
    entries behind reads those few), the round's rule on passes taken from the match's own
    record of its rounds."""
    if after_seq >= seq:
        return []
    readers = hosted.readers
    projector = PbProjector(readers.voluntary_at(after_seq), readers.jokers)
    return await projected(hosted, seat, projector, after_seq, seq)


async def projected(
    hosted: HostedMatch, seat: int | None, projector: PbProjector, after_seq: int, seq: int
) -> list[Told]:
    """The stored entries after ``after_seq`` up to ``seq``, each projected for ``seat``
    (``projector`` follows the rounds from ``after_seq`` on) and kept as a :class:`Told`."""
    told: list[Told] = []
    for item in await hosted.read_log(after_seq=after_seq, limit=seq - after_seq):
        if item.seq != after_seq + len(told) + 1:  # the store is gap-free: never
            raise RuntimeError(f"log of {hosted.match_id} read out of order")
        stored = pb.Event.FromString(item.payload)
        seen = project_for(stored, seat, projector)
        told.append(Told(seen, None, item.payload if seen is stored else None))
    return told


class SpectatorHistories:
    """The histories of the matches being watched on this replica."""

    def __init__(self) -> None:
        self._held: dict[str, ProjectedLog] = {}

    @contextlib.contextmanager
    def watching(self, match_id: str) -> Iterator[ProjectedLog]:
        """The match's history while a spectator's stream runs; dropped after its last."""
        history = self._held.get(match_id)
        if history is None:
            history = self._held[match_id] = ProjectedLog()
        history.watchers += 1
        try:
            yield history
        finally:
            history.watchers -= 1
            if not history.watchers and self._held.get(match_id) is history:
                del self._held[match_id]

    def __len__(self) -> int:
        return len(self._held)
