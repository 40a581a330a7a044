"""A final tournament's answers kept as the bytes sent.

Why: once a tournament is final (ended, none of its matches running) nothing of it changes,
yet anyone may ask for it, a page of up to 1,000 match lines at a time, again and again. Each
page was made line by line and serialized per call: about 5 ms of the event loop for 1,000
lines of a tournament in memory, and a read of the page's rows and outcomes as well for one
that is not. Under eight readers asking for random pages of a plan of 100,000 (issue 29's
tournaments flood) that was the tenth of the loop every match waited behind. Now its lines
are made once, :data:`CHUNK` at a time, and kept as their framed bytes (each the ``matches``
field of a ``TournamentInfo``, so a page is its brief's bytes followed by its lines': the
wire format merges them into one message); its signed brief, and the summary
``ListTournaments`` shows, likewise. Once kept, a call costs a dictionary lookup per chunk and
a join. Bounded in bytes, the least recently read dropped first (:mod:`..kept`); the brief of
a tournament whose director is in memory is kept with it as well (``Director.signed``).

Readers of a tournament whose lines are not kept yet make them one at a time: a thousand
people opening the page of a tournament that has just ended would each have made its first
chunks (and read their rows) at once; the first makes them, the others find them kept.
"""

from __future__ import annotations

import asyncio
from array import array
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from cardarena.v1 import tournament_pb2 as tpb

from ..hosting.subscribers import message_field
from ..kept import Kept, KeptBytes

CHUNK = 50
"""Lines made, serialized and kept together: a slice of the event loop's time each."""

LINES_BYTES = 24 << 20
"""Final tournaments' lines kept at most, in bytes: a plan of 100,000 matches whole (about
120 bytes a line) with room for others."""

RESULTS_BYTES = 16 << 20
"""Final tournaments' signed briefs kept at most (standings, crosstable, the signature) that
are not in memory with their directors: up to 360 KB each (64 entrants' crosstable)."""

SUMMARIES_BYTES = 16 << 20
"""Final tournaments' listed summaries kept at most (as large as their briefs)."""

OVERHEAD = 200
"""Bytes counted for each thing kept besides its data: its key, its place in the order."""

MATCHES = tpb.TournamentInfo.DESCRIPTOR.fields_by_name["matches"].number

MakeLines = Callable[[range], Awaitable[Sequence[tpb.TournamentMatch]]]
"""Makes the lines of the plan indices given (from the director, or from the store)."""


@dataclass(slots=True)
class Making:
    """The readers of one tournament making (or waiting to make) lines not kept."""

    lock: asyncio.Lock
    readers: int = 0


@dataclass(frozen=True, slots=True)
class Brief:
    """A final tournament's signed info without lines, as sent, and its plan's length."""

    data: bytes
    planned: int

    @classmethod
    def of(cls, data: bytes) -> Brief:
        return cls(data, tpb.TournamentInfo.FromString(data).planned)

    def __len__(self) -> int:
        return len(self.data) + OVERHEAD


@dataclass(frozen=True, slots=True)
class Run:
    """Consecutive lines framed: line ``i`` of the run ends at ``ends[i]`` of ``data``."""

    data: bytes
    ends: array[int]

    @classmethod
    def of(cls, lines: Sequence[tpb.TournamentMatch]) -> Run:
        framed = [message_field(MATCHES, line.SerializeToString()) for line in lines]
        ends, end = array("L"), 0
        for field in framed:
            end += len(field)
            ends.append(end)
        return cls(b"".join(framed), ends)

    def between(self, first: int, stop: int) -> bytes:
        """Lines ``first`` to ``stop`` (excluded) of the run."""
        start = self.ends[first - 1] if first else 0
        return self.data[start : self.ends[stop - 1]] if stop > first else b""

    def __len__(self) -> int:
        return len(self.data) + self.ends.itemsize * len(self.ends) + OVERHEAD


class Finals:
    """What is kept of final tournaments, by tournament id."""

    def __init__(
        self,
        *,
        lines_bytes: int = LINES_BYTES,
        results_bytes: int = RESULTS_BYTES,
        summaries_bytes: int = SUMMARIES_BYTES,
    ) -> None:
        self.results: Kept[Brief] = Kept(results_bytes)
        """Each one's signed brief (its ``results`` row)."""
        self.summaries = KeptBytes(summaries_bytes)
        """Each one's summary as ``ListTournaments`` lists it (its ``tournament`` row)."""
        self._runs: Kept[Run] = Kept(lines_bytes)
        self._making: dict[str, Making] = {}
        """By tournament id, while any of its readers makes lines or waits to."""

    async def lines(
        self, tournament_id: str, planned: int, indices: range, make: MakeLines
    ) -> bytes:
        """The framed lines ``indices`` (within ``range(planned)``) of the final tournament
        ``tournament_id``: those not kept made by ``make`` in one call (a read of the store
        is a batch), one reader of the tournament at a time."""
        if not indices:
            return b""
        chunks = range(indices.start // CHUNK, (indices.stop - 1) // CHUNK + 1)
        runs = {chunk: self._runs.get((tournament_id, chunk)) for chunk in chunks}
        if None in runs.values():
            making = self._making.setdefault(tournament_id, Making(asyncio.Lock()))
            making.readers += 1
            try:
                async with making.lock:  # what another reader made meanwhile is kept
                    await self._make(tournament_id, planned, runs, make)
            finally:
                making.readers -= 1
                if not making.readers:
                    del self._making[tournament_id]
        parts = []
        for chunk, kept in runs.items():
            assert kept is not None
            base = chunk * CHUNK
            parts.append(
                kept.between(max(indices.start - base, 0), min(indices.stop - base, len(kept.ends)))
            )
        return b"".join(parts)

    async def _make(
        self, tournament_id: str, planned: int, runs: dict[int, Run | None], make: MakeLines
    ) -> None:
        """Fill in ``runs``' missing chunks: from what is kept now, else made by ``make`` in
        one call, serialized a chunk per turn of the event loop, and kept."""
        for chunk, run in runs.items():
            if run is None:
                runs[chunk] = self._runs.get((tournament_id, chunk))
        missing = [chunk for chunk, run in runs.items() if run is None]
        if not missing:
            return
        span = range(missing[0] * CHUNK, min(planned, (missing[-1] + 1) * CHUNK))
        made = await make(span)
        if len(made) != len(span):  # kept short, it would shorten every later page
            raise RuntimeError(f"{len(made)} lines made for the {len(span)} of {span}")
        for chunk in missing:
            first = chunk * CHUNK - span.start
            runs[chunk] = fresh = Run.of(made[first : first + CHUNK])
            self._runs.keep((tournament_id, chunk), fresh)
            await asyncio.sleep(0)
