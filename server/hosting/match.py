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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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
from cardarena.v1.clocks import SeatClocks, TimeControl

from .. import metrics
from ..errors import Moved, NotRunning, RequestReused, SeatTaken, Stale
from ..store import (
    DuplicateRequest,
    EventStore,
    Fence,
    LeaseLost,
    MatchRecord,
    SeatRecord,
    StoreError,
)
from .clock import MoveClock, Reconnection
from .completion import to_completion
from .credentials import request_key, same_action, token_hash
from .dealing import Joins, follow
from .faults import SeatFaults, as_recorded
from .outcome import Outcome
from .rebuild import action_at
from .recent import RecentRequests
from .seating import Seat, seat_for, seat_holding
from .subscribers import Readers, turn_after
from .timing import Timing

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


def repeated(
    answered: tuple[int, int, int], action: int, expected_seq: int, request_id: str
) -> Submitted:
    """A request id this seat used before, answered with what it first wrote if it asks for
    the same again; :class:`RequestReused` (ALREADY_EXISTS) if it asks for something else."""
    first, last, recorded = answered
    if expected_seq != first - 1 or not same_action(recorded, action):
        raise RequestReused(request_id, "by this seat for another action or expected_seq")
    return Submitted(first, last, applied=False, events=[], voluntary_before=False)


class HostedMatch(Timing):
    """One match in memory, its seats, its subscribers, its clock and its faults."""

    def __init__(
        self,
        record: MatchRecord,
        engine: Match,
        seats: list[Seat],
        last_seq: int,
        store: EventStore,
        *,
        control: TimeControl,
        voluntary_pass: bool,
        on_change: Callable[[HostedMatch], None],
        faults: SeatFaults | None = None,
        tournament_id: str = "",
        seed_shared: bool = False,
        reconnection: Reconnection | None = None,
    ) -> None:
        self.record = record
        self.match_id = record.match_id
        self.engine = engine
        self.seats = seats
        self._seated = False
        """Every seat was found taken (a taken seat stays taken; the one exception, a join
        whose write failed, clears this): ``running`` asks the seats only until then."""
        self.joins = Joins(len(seats))
        """Who the log says joined, and their entropy: the first deal waits for all."""
        self.last_seq = last_seq
        self.last_hash = b""
        self.last_written = time.monotonic()
        """When this process last wrote to the log (or loaded it): an untimed match idle too
        long is cancelled (:meth:`.arena.Arena.expire_after`)."""
        self.store = store
        self.control = control
        self.move_ms = control.move_ms
        self.banks = SeatClocks(control, len(seats))
        """What each seat has left of its bank and round budget, folded from the log."""
        self._turn_started, self._turn_allowed, self._turn_window, self._armed = 0.0, 0, 0, -1
        self.lock = asyncio.Lock()
        self.clock = MoveClock(control.move_ms)
        self._turn = 0
        """Counts the clock's re-arming: a timer fires only for the turn it was armed for (a
        fault written in the middle of a turn does not give the seat more time)."""
        self.faults = faults or SeatFaults(len(seats))
        self.reconnection = reconnection or Reconnection()
        self.returning: set[int] = set()
        """Seats not yet back since an outage (:class:`.clock.Reconnection`): while its window
        is open, their turns are not timed beyond it."""
        self.tournament_id = tournament_id
        self.seed_shared = seed_shared
        """The seed deals other matches too (a duplicate group's): revealed by its tournament."""
        self.revealed = False
        """Whether the log holds ``SeedRevealed`` (see :mod:`.ending`)."""
        self._on_change = on_change
        self._reported_status = ""
        self.requests = RecentRequests(len(seats))
        """Each seat's latest request ids and what they wrote (:mod:`.recent`), however this
        process came to host the match: a retry is answered from memory, a new id costs no
        read of the store."""
        self.cancelled = False
        """Ended by CancelMatch or expiry rather than by the rules."""
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
        """Every seat taken and not ended (by the rules or by a cancellation): only then may
        anyone act. The store no longer guards an ended match whose seed is still to be
        revealed (its log stays open for the reveal), so this is the guard."""
        if self.ended:
            return False
        if not self._seated:
            self._seated = all(s.token_hash is not None for s in self.seats)
        return self._seated

    @property
    def ended(self) -> bool:
        return self.cancelled or self.engine.over

    @property
    def status(self) -> str:
        return "ended" if self.ended else "running" if self.running else "waiting"

    def outcome(self) -> Outcome:
        """What the match produced so far (its result once it has ended)."""
        return Outcome(
            match_id=self.match_id,
            totals=tuple(self.engine.totals),
            winners=tuple(self.engine.winners),
            cancelled=self.cancelled,
            faults=tuple(self.faults.counts),
            forfeited=tuple(self.faults.forfeited),
            last_hash=self.last_hash,
            revealed=self.revealed,
            last_seq=self.last_seq,
            kinds=tuple(self.faults.kinds),
        )

    def seat_of(self, token: str) -> int | None:
        """The seat whose token this is (constant time); ``None`` if none."""
        return seat_holding(self.seats, token)

    def snapshot(self, seat: int | None) -> pb.Snapshot:
        viewer: Any = "spectator" if seat is None else seat
        table = view(self.engine, viewer)
        if self.cancelled:  # the position it stopped at, and nobody is to act in it
            table = replace(table, to_act=None, legal_actions=())
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
        *,
        contribution: bytes | None = None,
    ) -> tuple[int, str]:
        """Take ``seat`` (or the lowest free one) with ``token`` (or a new one); a reserved
        seat only with its ``join_secret``, contributing ``contribution`` (32 bytes) to the
        deal seed. A repeat of a join with the same client-chosen token answers with the seat
        that token holds (its first contribution stands). The last seat's join deals."""
        return await to_completion(self._join(seat, name, token, join_secret, contribution))

    async def _join(
        self,
        seat: int | None,
        name: str,
        token: str | None,
        join_secret: str | None,
        contribution: bytes | None,
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
            first = self.last_seq + 1
            joined = pb.Event(
                seq=first,
                seat_joined=pb.SeatJoined(seat=seat, name=name, contribution=contribution or b""),
            )
            record = SeatRecord(self.match_id, seat, digest, name)
            taken = self.seats[seat]
            taken.token_hash, taken.name = digest, name  # before publishing: it may start
            try:
                dealt = follow(self.engine, self.joins, self.record.seed, joined)
                encoded = [joined] + [
                    codec.event_to_pb(e, first + 1 + i, self.match_id) for i, e in enumerate(dealt)
                ]
                await self._persist(encoded, request_id=None, seat=None, join=record)
            except Exception:  # fenced off, or unknown: go back to (and follow) the log
                taken.token_hash, taken.name = None, ""
                self._seated = False
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
            if metrics.STAGE_TIMES:
                metrics.begin()
            if self._out_of_step:
                await self._resync()
            if request_id:
                done = await self._answered(seat, request_id)
                if done is not None:
                    return repeated(done, action, expected_seq, request_id)
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
            if self.faults.forfeited[seat]:
                raise NotRunning(f"seat {seat} has forfeited the match: the server plays it")
            self.returning.discard(seat)
            voluntary_before = self.readers.voluntary_pass
            if metrics.STAGE_TIMES:
                metrics.lap("submit")
            try:
                events = self.engine.apply(seat, action)
                if metrics.STAGE_TIMES:
                    metrics.lap("engine")
            except ActionError as error:
                await self._refused(seat, codec.action_to_pb(action), str(error))
                raise
            try:
                first, last, encoded = await self._record(
                    events,
                    request_id=request_key(seat, request_id) if request_id else None,
                    seat=seat,
                )
            except DuplicateRequest as done:  # the store knew the id after all: back to the log
                recorded = await action_at(self.store, self.match_id, done.first_seq)
                answered = (done.first_seq, done.last_seq, recorded)
                return repeated(answered, action, expected_seq, request_id)
            if metrics.STAGE_TIMES:
                metrics.begin()
            if request_id:
                self.requests.put(seat, request_id, (first, last, action))
            if metrics.STAGE_TIMES:
                metrics.lap("submit")
            return Submitted(
                first, last, applied=True, events=encoded, voluntary_before=voluntary_before
            )

    async def _answered(self, seat: int, request_id: str) -> tuple[int, int, int] | None:
        """``(first_seq, last_seq, action)`` of this seat's earlier request with this id: from
        memory, or, for an id used before whose result memory no longer keeps, from the store
        (:mod:`.recent`). The action of a request read from the store is read back from its
        first event, once."""
        done = self.requests.get(seat, request_id)
        if done is None and self.requests.used(seat, request_id):
            seqs = await self.store.request_result(self.match_id, request_key(seat, request_id))
            done = None if seqs is None else (*seqs, None)
        if done is None:
            return None
        first, last, action = done
        if action is None:
            action = await action_at(self.store, self.match_id, first)
            self.requests.put(seat, request_id, (first, last, action))
        return first, last, action

    async def refuse_malformed(
        self, seat: int, action: pb.Action, expected_seq: int, detail: str
    ) -> None:
        """An action that is no action at all (it does not decode): refused like an illegal
        one, and a fault of the seat to act if it answered the current seq. The log keeps it
        as :func:`~.faults.as_recorded` bounds it, not as sent. Run to completion, as an
        action is: a caller that hangs up mid-write must not leave the match behind its log."""
        await to_completion(self._refuse_malformed(seat, action, expected_seq, detail))

    async def _refuse_malformed(
        self, seat: int, action: pb.Action, expected_seq: int, detail: str
    ) -> None:
        async with self.lock:
            if self.owned and self.running and expected_seq == self.last_seq:
                await self._refused(seat, as_recorded(action), detail)

    async def _refused(self, seat: int, action: pb.Action, detail: str) -> None:
        """Log the refusal of the seat to act's action as its fault, where the match's
        policy logs them (once per seat and turn). Call with the lock held."""
        if seat == self.engine.to_act and self.faults.logs_refusal(seat):
            await self._fault(
                pb.SeatFaulted(
                    seat=seat,
                    kind=pb.FAULT_KIND_REFUSED_ACTION,
                    action=action,
                    detail=detail[:200],
                )
            )

    async def disconnected(self, seat: int) -> None:
        """The tournament entrant at ``seat`` went away while the match runs: a fault."""
        async with self.lock:
            if self.owned and self.running and self.faults.logs_refusal(seat):
                fault = pb.SeatFaulted(
                    seat=seat, kind=pb.FAULT_KIND_DISCONNECTED, detail="the entrant disconnected"
                )
                with contextlib.suppress(StoreError):
                    await self._fault(fault)

    async def _fault(self, fault: pb.SeatFaulted) -> None:
        """Log a fault (and the forfeit it brings, if it does) in one write. The seat's move
        clock runs on: a fault never buys time."""
        first = self.last_seq + 1
        encoded = [pb.Event(seq=first, seat_faulted=fault)]
        forfeits = self.faults.forfeits_with_one_more(fault.seat)
        if forfeits:
            encoded.append(
                pb.Event(seq=first + 1, seat_forfeited=self.faults.forfeit_event(fault.seat))
            )
        try:
            await self._persist(encoded, request_id=None, seat=None, rearm=forfeits)
        except Exception:
            await self._recover()
            raise
        self.log.info("seat_faulted", seat=fault.seat, forfeited=forfeits)

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
            forfeited = self.faults.forfeited[seat]
            encoded.append(
                pb.Event(seq=first, timed_out=pb.TimedOut(seat=seat, forfeited=forfeited))
            )
            if not forfeited:  # the whole allowance, used up
                encoded[0].think_ms = self._turn_allowed
            if self.faults.forfeits_with_one_more(seat):
                encoded.append(
                    pb.Event(seq=first + 1, seat_forfeited=self.faults.forfeit_event(seat))
                )
        start = first + len(encoded)
        acted = [codec.event_to_pb(e, start + i, self.match_id) for i, e in enumerate(events)]
        if seat is not None and not timed_out:
            self.charge(acted, seat)
        encoded += acted
        if self.engine.over:
            encoded += self.reveal_event(first + len(encoded))
        try:
            await self._persist(encoded, request_id=request_id, seat=seat)
        except DuplicateRequest:
            await self._recover()  # the engine moved on from a state the store had not
            raise
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

    def _changed(self) -> None:
        """Report a change of status (waiting, running, ended) to the arena."""
        if self.status != self._reported_status:
            self._reported_status = self.status
            self._on_change(self)

    async def write_opening(self) -> None:
        """Persist the events the match starts with (its settings, and the first round's
        start; the deal waits for every seat): once, at seq 1. Call with the lock held."""
        # The server's settings go into the hashed start event too, so none can be edited
        # unseen: the clock, which seats only a join secret may take, the fault policy.
        reserved = [seat.reserved is not None for seat in self.seats]
        encoded = [
            codec.event_to_pb(
                e,
                i + 1,
                self.match_id,
                move_ms=self.move_ms,
                reserved_seats=reserved,
                forfeit_after=self.faults.forfeit_after,
                tournament_id=self.tournament_id,
                clocks={k: v for k, v in self.control.settings().items() if k != "move_ms"},
            )
            for i, e in enumerate(self.engine.log)
        ]
        await self._persist(encoded, request_id=None, seat=None)

    # -- readers ------------------------------------------------------------------------

    def _fold_log(self, encoded: list[pb.Event]) -> None:
        """Fold entries into what the log says beyond the engine: faults, and the reveal."""
        for entry in encoded:
            self.faults.note(entry)
            self.banks.fold(entry)
            self.revealed |= entry.WhichOneof("kind") == "seed_revealed"

    def _publish(self, encoded: list[pb.Event], payloads: Sequence[bytes] | None = None) -> None:
        """Hand durable events (``payloads``: as stored) to every reader with whose turn it is
        now, then prompt the seat to act."""
        self.readers.publish(encoded, turn_after(self, encoded), payloads)
        seat = self.engine.to_act
        if seat is not None and self.running:
            self.readers.prompt(seat, self.your_turn)
