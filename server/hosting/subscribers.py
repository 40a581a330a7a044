"""Readers of a match: a bounded queue each, and the projection of log entries for them.

A subscriber that falls a whole queue behind is dropped (its stream ends and the client
resumes from its last ``seq``), so that no reader can hold a match up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

SUBSCRIBER_QUEUE = 1024


@dataclass(eq=False)
class Subscriber:
    """One open event stream: who reads it, and a bounded queue of its next events."""

    seat: int | None
    queue: asyncio.Queue[pb.Event | pb.YourTurn | None] = field(
        default_factory=lambda: asyncio.Queue(SUBSCRIBER_QUEUE)
    )
    dropped: bool = False
    on_drop: Callable[[], None] | None = None
    """Called once when the reader falls behind: the stream ends at once (UNAVAILABLE),
    even while it waits for a client that stopped reading."""

    def offer(self, item: pb.Event | pb.YourTurn) -> bool:
        """Queue ``item``; ``False`` (and dropped) if the reader fell a whole queue behind."""
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.drop()
            return False
        return True

    def drop(self) -> None:
        if not self.dropped:
            self.dropped = True
            if self.on_drop is not None:
                self.on_drop()


class PbProjector:
    """Follows the rounds of a stream of log entries so it knows which passes are private."""

    def __init__(self, voluntary_pass: bool = False) -> None:
        self.voluntary_pass = voluntary_pass

    def track(self, event: pb.Event) -> None:
        if event.WhichOneof("kind") == "round_started":
            self.voluntary_pass = event.round_started.voluntary_pass


def project_for(event: pb.Event, seat: int | None, projector: PbProjector) -> pb.Event:
    projector.track(event)
    return codec.project_pb(event, seat, voluntary_pass=projector.voluntary_pass)
