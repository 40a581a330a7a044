"""How a hosted match writes its log: persist before publish.

One method, shared by every path that writes (joins, actions, faults, the opening, a cancel,
an end, a reveal): the events are appended to the store, fenced by the match's lease, and only
once they are durable does the match fold them in, restart its clock and hand them to its
readers.
"""

from __future__ import annotations

import time

from cardarena.v1 import game_pb2 as pb

from .. import metrics
from ..store import LeaseLost, SeatRecord
from .following import LogFollower


class LogWriter(LogFollower):
    """The writing half of :class:`~.match.HostedMatch` (its attributes are set there)."""

    async def _persist(
        self,
        encoded: list[pb.Event],
        *,
        request_id: str | None,
        seat: int | None,
        join: SeatRecord | None = None,
        rearm: bool = True,
    ) -> None:
        payloads = [e.SerializeToString() for e in encoded]
        if metrics.STAGE_TIMES:
            metrics.lap("encode")
        try:
            stored = await self.store.append(
                self.match_id,
                payloads,
                expected_seq=self.last_seq,
                request_id=request_id,
                seat=seat,
                fence=self.fence,
                join=join,
            )
        except LeaseLost:
            self.demote()
            raise
        if metrics.STAGE_TIMES:
            metrics.begin()
        self.last_seq += len(payloads)
        self.last_hash = stored[-1].hash
        self.last_written = time.monotonic()
        self._fold_log(encoded)
        if rearm:
            self._rearm_clock()
        if metrics.STAGE_TIMES:
            metrics.lap("fold and clock")
        self._publish(encoded, payloads)
        self._changed()
        if metrics.STAGE_TIMES:
            metrics.lap("publish")
