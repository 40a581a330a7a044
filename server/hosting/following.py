"""What a hosted match does with its log when it is not (or no longer sure to be) its writer.

A replica follows the matches another replica owns (:meth:`LogFollower.catch_up`), takes one
over when its lease comes to it, and lets go when it loses the lease; a writer whose write
failed in a way it cannot know goes back to the log (:meth:`LogFollower._recover`). Kept apart
from :mod:`.match` because a single process never takes these paths except to recover.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from cardarena.engine import ActionError, Match
from cardarena.v1 import game_pb2 as pb
from cardarena.v1.clocks import SeatClocks

from ..store import (
    EventStore,
    Fence,
    MatchRecord,
    StoreConflict,
    StoredEvent,
    StoreError,
)
from .clock import MoveClock, Reconnection, restarts
from .completion import to_completion
from .dealing import Joins, follow
from .faults import SeatFaults
from .rebuild import rebuild_engine
from .recent import RecentRequests
from .seating import Seat
from .subscribers import Readers, turn_after


class LogFollower(ABC):
    """The log-following half of :class:`~.match.HostedMatch` (its attributes are set there)."""

    record: MatchRecord
    match_id: str
    engine: Match
    joins: Joins
    seats: list[Seat]
    last_seq: int
    last_hash: bytes
    last_written: float
    store: EventStore
    move_ms: int
    banks: SeatClocks
    lock: asyncio.Lock
    clock: MoveClock
    reconnection: Reconnection
    faults: SeatFaults
    readers: Readers
    cancelled: bool
    requests: RecentRequests
    owned: bool
    fence: Fence | None
    log: Any
    _out_of_step: bool

    # What the match itself provides (:class:`~.match.HostedMatch` and :class:`~.ending.Ending`).

    @property
    @abstractmethod
    def running(self) -> bool: ...

    @property
    @abstractmethod
    def ended(self) -> bool: ...

    @abstractmethod
    async def write_opening(self) -> None: ...

    @abstractmethod
    async def _end(self) -> None: ...

    @abstractmethod
    def _rearm_clock(self, *, at_least_ms: int = 0) -> None: ...

    @abstractmethod
    def await_seats(self) -> None: ...

    @abstractmethod
    def _publish(
        self, encoded: list[pb.Event], payloads: Sequence[bytes] | None = None
    ) -> None: ...

    @abstractmethod
    def _fold_log(self, encoded: list[pb.Event]) -> None: ...

    @abstractmethod
    def _changed(self) -> None: ...

    async def read_log(self, *, after_seq: int = 0, limit: int | None = None) -> list[StoredEvent]:
        """Its durable entries after ``after_seq`` (at most ``limit``), as the store has them:
        what a retried action, a stream's history and a full log are read from."""
        return await self.store.read_events(self.match_id, after_seq=after_seq, limit=limit)

    def demote(self, *, released: bool = False) -> None:
        """Another replica owns the match now (or will: ``released``, this one is draining):
        stop the clock and write nothing more."""
        if self.owned and not self.ended:
            self.log.info("lease_released" if released else "lease_lost")
        self.owned = False
        self.fence = None
        self.clock.stop()

    async def take_over(self, fence: Fence) -> None:
        """This replica now holds the lease: read what the last owner wrote, then carry on
        (its clock restarts with a full move time)."""
        await to_completion(self._take_over(fence))

    async def _take_over(self, fence: Fence) -> None:
        async with self.lock:
            await self._follow_store()
            self.owned = True
            self.fence = fence
            self.last_written = time.monotonic()  # an idle match counts from its takeover
            self.requests.learn(await self.store.request_results(self.match_id))
            if self.last_seq == 0:  # its creator died before writing the first deal
                await self.write_opening()
            if (
                self.ended
            ):  # its owner died between the last event (or a cancel) and marking it ended
                with contextlib.suppress(StoreConflict):
                    await self._end()
            # The owner died: until each seat is back, its turns wait out the window.
            self.reconnection.open(self.clock.keeper.now())
            self.await_seats()
            self._rearm_clock()
            self.readers.publish([], turn_after(self))  # a full move from now, no event
        self.log.info("lease_taken", epoch=fence.epoch, seq=self.last_seq)

    async def catch_up(self) -> None:
        """Apply and publish what the owner appended since ``last_seq`` (followers only)."""
        if not self.owned:
            await to_completion(self._catch_up())

    async def _catch_up(self) -> None:
        async with self.lock:
            if not self.owned:
                await self._follow_store()

    async def _follow_store(self) -> None:
        stored = await self.store.read_events(self.match_id, after_seq=self.last_seq)
        if not stored:
            return
        encoded = [pb.Event.FromString(item.payload) for item in stored]
        seats_changed = False
        try:
            for entry in encoded:
                follow(self.engine, self.joins, self.record.seed, entry)
                kind = entry.WhichOneof("kind")
                seats_changed |= kind == "seat_joined"
                self.cancelled |= kind == "match_cancelled"
        except ActionError:  # cannot happen with a sound log; never leave a follower stuck
            self.log.exception("follow_diverged")
            await self._replay_to(stored[-1].seq)
            seats_changed = True
        if seats_changed:
            for seat in await self.store.get_seats(self.match_id):
                taken = self.seats[seat.seat]
                taken.token_hash, taken.name = seat.token_hash, seat.name
        self.last_seq = stored[-1].seq
        self.last_hash = stored[-1].hash
        self._fold_log(encoded)  # first: whether the seat now to act has forfeited
        to_act = self.engine.to_act
        if self.owned:
            if restarts(encoded):  # a write of its own that landed, its answer lost: a new move
                self._rearm_clock()
        else:
            # Only the owner runs the clock; a follower tells its readers the deadline the
            # owner set when it wrote these events, as near as it knows (it reads them
            # milliseconds later, so the estimate errs late by that much).
            acting = self.running and to_act is not None
            forfeited = to_act is not None and self.faults.forfeited[to_act]
            allowed = self.banks.allowance_ms(to_act) if acting and to_act is not None else None
            self.clock.estimate(
                allowed is not None, encoded, at_once=acting and forfeited, move_ms=allowed
            )
        self._publish(encoded, [item.payload for item in stored])
        self._changed()

    async def _recover(self) -> None:
        """After a write whose outcome this process cannot know (refused, fenced off, or lost
        with the connection), go back to the log; if the store cannot be read now either,
        the next change does it first (``_out_of_step``)."""
        self._out_of_step = True
        try:
            await self._resync()
        except StoreError as error:
            self.log.warning("resync_failed", error=str(error))

    async def _resync(self) -> None:
        """Replay the log up to the last seq subscribers have seen, then follow it from
        there: whatever the store holds beyond (a write that did commit, another owner's
        events) is applied *and published*, so no stream is left with a gap. Requests the
        store recorded meanwhile (a write that did commit) are learnt from it."""
        await self._replay_to(self.last_seq)
        await self._follow_store()
        self.requests.learn(await self.store.request_results(self.match_id))
        self._out_of_step = False

    async def _replay_to(self, seq: int) -> None:
        """The engine as the log has it at ``seq``, replayed from the seed: the log is the truth."""
        self.engine, self.joins = rebuild_engine(
            self.record, await self.store.read_events(self.match_id, limit=seq)
        )
