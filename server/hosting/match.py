"""Hosting matches: one writer per match, persist before publish, resume after a restart.

A :class:`HostedMatch` owns one engine match. Every change goes through its lock: the engine
applies the action, the resulting events are encoded with their ``seq`` and appended to the
store, and only once they are durable are they acknowledged and handed to subscribers. Each
subscriber has a bounded queue; one that falls behind is dropped (its stream ends and the
client resumes from its last ``seq``) so that no reader can hold a match up.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from cardarena.engine import (
    ActionError,
    Match,
    view,
)
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from .. import metrics
from ..errors import Moved, NotRunning, RequestReused, SeatTaken, Stale
from ..store import (
    DuplicateRequest,
    EventStore,
    Fence,
    LeaseLost,
    MatchRecord,
    SeatRecord,
    StoreConflict,
    StoreError,
    now_iso,
)
from .clock import MoveClock
from .completion import to_completion
from .credentials import request_key, same_action, token_hash
from .rebuild import rebuild_engine, stored_request
from .seating import Seat, seat_for, seat_holding
from .subscribers import Readers

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Submitted:
    """What a submission wrote: ``seq`` range, whether this call applied it (``False``: a
    retry answered with the first result), the events, and whether the round before them
    allowed voluntary passes (for projecting them)."""

    first_seq: int
    last_seq: int
    applied: bool
    events: list[pb.Event]
    voluntary_before: bool


class HostedMatch:
    """One match in memory, its seats, its subscribers and its clock."""

    def __init__(
        self,
        record: MatchRecord,
        engine: Match,
        seats: list[Seat],
        last_seq: int,
        store: EventStore,
        *,
        move_ms: int,
        voluntary_pass: bool,
        on_change: Callable[[HostedMatch], None],
    ) -> None:
        self.record = record
        self.match_id = record.match_id
        self.engine = engine
        self.seats = seats
        self.last_seq = last_seq
        self.last_hash = b""
        self.store = store
        self.move_ms = move_ms
        self.lock = asyncio.Lock()
        self.clock = MoveClock(move_ms)
        self._on_change = on_change
        self._reported_status = ""
        self.requests: dict[tuple[int, str], tuple[int, int, int]] = {}
        """``(seat, request id) -> (first_seq, last_seq, action)`` answered by this process;
        the store has the older ones."""
        self.cancelled = False
        """Ended by CancelMatch or expiry rather than by the rules."""
        self.resumed = False
        """Loaded from the store: request ids from before this process are only there."""
        self.owned = True
        """Whether this process writes the match. A replica follows the matches it does not
        own from the store (:meth:`catch_up`) and forwards their actions to the owner."""
        self.fence: Fence | None = None
        """The lease this process's writes carry (replicas only)."""
        self._out_of_step = False
        """A write failed and the log could not be read back: resync before the next one."""
        self.log = log.bind(match_id=self.match_id)
        self.readers = Readers(self.log, voluntary_pass=voluntary_pass)
        """Its open streams, and what each kind of reader may see."""

    # -- state ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return not self.engine.over and all(s.token_hash is not None for s in self.seats)

    @property
    def ended(self) -> bool:
        return self.cancelled or self.engine.over

    @property
    def status(self) -> str:
        return "ended" if self.ended else "running" if self.running else "waiting"

    def seat_of(self, token: str) -> int | None:
        """The seat whose token this is (constant time); ``None`` if none."""
        return seat_holding(self.seats, token)

    def snapshot(self, seat: int | None) -> pb.Snapshot:
        viewer: Any = "spectator" if seat is None else seat
        table = view(self.engine, viewer)
        deadline_ms = int(self.clock.deadline * 1000)
        return codec.snapshot_to_pb(
            table,
            match_id=self.match_id,
            seq=self.last_seq,
            commitment=self.record.commitment,
            deadline_ms=deadline_ms,
        )

    # -- changes -------------------------------------------------------------------------

    async def join(
        self,
        seat: int | None,
        name: str,
        token: str | None = None,
        join_secret: str | None = None,
    ) -> tuple[int, str]:
        """Take ``seat`` (or the lowest free one) with ``token`` (or a new one); a reserved
        seat only with its ``join_secret``. A repeat of a join with the same client-chosen
        token answers with the seat that token holds."""
        return await to_completion(self._join(seat, name, token, join_secret))

    async def _join(
        self, seat: int | None, name: str, token: str | None, join_secret: str | None
    ) -> tuple[int, str]:
        async with self.lock:
            if self._out_of_step:
                await self._resync()
            if not self.owned:
                raise Moved(self.match_id)
            if token:
                held = self.seat_of(token)
                if held is not None:
                    if seat is None or seat == held:
                        return held, token
                    raise SeatTaken(f"this token already holds seat {held}")
            if self.ended:
                raise NotRunning("the match has ended")
            seat = seat_for(self.seats, seat, join_secret)
            token = token or secrets.token_urlsafe(32)
            digest = token_hash(token)
            joined = pb.Event(
                seq=self.last_seq + 1, seat_joined=pb.SeatJoined(seat=seat, name=name)
            )
            record = SeatRecord(self.match_id, seat, digest, name)
            taken = self.seats[seat]
            taken.token_hash, taken.name = digest, name  # before publishing: it may start
            try:
                await self._persist([joined], request_id=None, seat=None, join=record)
            except Exception:  # fenced off, or unknown: go back to (and follow) the log
                taken.token_hash, taken.name = None, ""
                await self._recover()
                raise
            self.log.info("seat_joined", seat=seat)
            return seat, token

    async def submit(self, seat: int, action: int, expected_seq: int, request_id: str) -> Submitted:
        """Apply ``seat``'s action, once per request id."""
        return await to_completion(self._submit(seat, action, expected_seq, request_id))

    async def _submit(
        self, seat: int, action: int, expected_seq: int, request_id: str
    ) -> Submitted:
        async with self.lock:
            if self._out_of_step:
                await self._resync()
            if request_id:
                done = await self._answered(seat, request_id)
                if done is not None:
                    first, last, recorded = done
                    if expected_seq != first - 1 or not same_action(recorded, action):
                        raise RequestReused(
                            request_id, "by this seat for another action or expected_seq"
                        )
                    return Submitted(first, last, applied=False, events=[], voluntary_before=False)
            if not self.owned:
                raise Moved(self.match_id)
            if not self.running:
                raise NotRunning(
                    "the match has ended" if self.ended else "the match is waiting for seats"
                )
            if expected_seq != self.last_seq:
                raise Stale(
                    f"expected_seq {expected_seq} is stale: the match is at seq {self.last_seq}"
                )
            voluntary_before = self.readers.voluntary_pass
            events = self.engine.apply(seat, action)
            first, last, encoded = await self._record(
                events, request_id=request_key(seat, request_id) if request_id else None, seat=seat
            )
            if request_id:
                self.requests[seat, request_id] = (first, last, action)
            return Submitted(
                first, last, applied=True, events=encoded, voluntary_before=voluntary_before
            )

    async def _answered(self, seat: int, request_id: str) -> tuple[int, int, int] | None:
        """``(first_seq, last_seq, action)`` of this seat's earlier request with this id: from
        memory, or (for a match loaded from the store) from the store and the logged event."""
        done = self.requests.get((seat, request_id))
        if done is not None or not self.resumed:
            return done
        return await stored_request(self.store, self.match_id, request_key(seat, request_id))

    async def cancel(self, reason: str) -> None:
        """End the match now: ``MatchCancelled`` and the seed revealed, in one write."""
        await to_completion(self._cancel(reason))

    async def _cancel(self, reason: str) -> None:
        async with self.lock:
            if self._out_of_step:
                await self._resync()
            if not self.owned:
                raise Moved(self.match_id)
            if self.ended:
                raise NotRunning("the match has ended")
            first = self.last_seq + 1
            encoded = [
                pb.Event(
                    seq=first,
                    match_cancelled=pb.MatchCancelled(
                        reason=reason, totals=[codec.score_to_pb(t) for t in self.engine.totals]
                    ),
                ),
                pb.Event(seq=first + 1, seed_revealed=pb.SeedRevealed(seed=self.record.seed)),
            ]
            self.cancelled = True  # before publishing: streams end when they see it
            try:
                await self._persist(encoded, request_id=None, seat=None)
            except Exception:
                self.cancelled = False
                await self._recover()
                raise
            await self._end()
            self.log.info("match_cancelled", reason=reason)

    async def _record(
        self,
        events: list[ev.Event],
        *,
        request_id: str | None,
        seat: int | None,
        timed_out: bool = False,
    ) -> tuple[int, int, list[pb.Event]]:
        """Persist what one action caused (after a TimedOut entry when the clock played it),
        atomically, then publish it: one write, so no reader sees half of it."""
        first = self.last_seq + 1
        encoded = []
        if timed_out and seat is not None:
            encoded.append(pb.Event(seq=first, timed_out=pb.TimedOut(seat=seat)))
        start = first + len(encoded)
        encoded += [codec.event_to_pb(e, start + i, self.match_id) for i, e in enumerate(events)]
        if self.engine.over:
            encoded.append(
                pb.Event(
                    seq=first + len(encoded), seed_revealed=pb.SeedRevealed(seed=self.record.seed)
                )
            )
        try:
            await self._persist(encoded, request_id=request_id, seat=seat)
        except DuplicateRequest as done:
            await self._recover()  # the engine moved on from a state the store had not
            return done.first_seq, done.last_seq, []
        except LeaseLost:  # not a fault: another replica owns the match now
            await self._recover()
            raise
        except Exception:
            self.log.exception("persist_failed")
            await self._recover()
            raise
        if self.engine.over:
            await self._end()
            self.log.info("match_ended", winners=list(self.engine.winners))
        return first, self.last_seq, encoded

    async def _persist(
        self,
        encoded: list[pb.Event],
        *,
        request_id: str | None,
        seat: int | None,
        join: SeatRecord | None = None,
    ) -> None:
        payloads = [e.SerializeToString() for e in encoded]
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
        self.last_seq += len(payloads)
        self.last_hash = stored[-1].hash
        self._rearm_clock()
        self._publish(encoded)
        if self.status != self._reported_status:
            self._reported_status = self.status
            self._on_change(self)

    async def write_opening(self) -> None:
        """Persist the events the match starts with (the first deal): once, at seq 1. Call
        with the lock held."""
        # The server's settings go into the hashed start event too, so none can be edited
        # unseen: the clock, and which seats only a join secret may take.
        reserved = [seat.reserved is not None for seat in self.seats]
        encoded = [
            codec.event_to_pb(
                e, i + 1, self.match_id, move_ms=self.move_ms, reserved_seats=reserved
            )
            for i, e in enumerate(self.engine.log)
        ]
        await self._persist(encoded, request_id=None, seat=None)

    # -- ownership (replicas) ------------------------------------------------------------

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
            self.resumed = True  # request ids answered elsewhere are only in the store
            if self.last_seq == 0:  # its creator died before writing the first deal
                await self.write_opening()
            if (
                self.ended
            ):  # its owner died between the last event (or a cancel) and marking it ended
                with contextlib.suppress(StoreConflict):
                    await self._end()
            self._rearm_clock()
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
                decoded = codec.event_from_pb(entry)
                recorded = None if decoded is None else self.engine.recorded_action(decoded)
                if recorded is not None:
                    self.engine.apply(*recorded)
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
        if not self.owned:
            # Only the owner runs the clock; a follower tells its readers the deadline the
            # owner set when it wrote these events, as near as it knows (it reads them
            # milliseconds later, so the estimate errs late by that much).
            waiting = self.move_ms > 0 and self.running and self.engine.to_act is not None
            self.clock.estimate(waiting)
        self._publish(encoded)
        if self.status != self._reported_status:
            self._reported_status = self.status
            self._on_change(self)

    async def _end(self) -> None:
        """Mark the match ended in the store. The action that ended it is already durable, so
        losing the lease here is no failure: the next owner finishes the job."""
        try:
            await self.store.end_match(self.match_id, now_iso(), fence=self.fence)
        except LeaseLost:
            return

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
        events) is applied *and published*, so no stream is left with a gap. Request ids
        may now be known only to the store."""
        await self._replay_to(self.last_seq)
        self.resumed = True
        await self._follow_store()
        self._out_of_step = False

    async def _replay_to(self, seq: int) -> None:
        """The engine as the log has it at ``seq``, replayed from the seed: the log is the truth."""
        self.engine = rebuild_engine(
            self.record, await self.store.read_events(self.match_id, limit=seq)
        )

    # -- readers ------------------------------------------------------------------------

    def _publish(self, encoded: list[pb.Event]) -> None:
        """Hand durable events to every reader, then prompt the seat to act."""
        self.readers.publish(encoded)
        seat = self.engine.to_act
        if seat is not None and self.running:
            self.readers.prompt(seat, self.your_turn)

    def your_turn(self) -> pb.YourTurn:
        return pb.YourTurn(
            seq=self.last_seq,
            legal_actions=[codec.action_to_pb(a) for a in self.engine.legal_actions()],
            deadline_unix_ms=int(self.clock.deadline * 1000),
        )

    # -- the clock -----------------------------------------------------------------------

    def _rearm_clock(self) -> None:
        self.clock.stop()
        if self.move_ms > 0 and self.owned and self.running and self.engine.to_act is not None:
            seq = self.last_seq
            self.clock.start(lambda: self._expire(seq))

    async def _expire(self, seq: int) -> None:
        async with self.lock:
            seat = self.engine.to_act
            if seq != self.last_seq or not self.owned or not self.running or seat is None:
                return
            events = self.engine.apply(seat, self.engine.default_action())
            metrics.ACTIONS.inc()
            self.log.info("timed_out", seat=seat)
            try:
                await self._record(events, request_id=None, seat=seat, timed_out=True)
            except (LeaseLost, StoreError) as error:  # rebuilt from the store; nothing to answer
                self.log.warning("timeout_not_recorded", error=str(error))
