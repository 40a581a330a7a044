"""A hosted match's turn clock: how long the seat to act has, what its action cost it, and
the default action when it runs out.

A turn lasts the least of the clocks in force (:class:`cardarena.v1.clocks.TimeControl`: per
move, what is left of the seat's bank, what is left of its round budget), plus, for a seat not
yet back after an outage, what is left of the reconnection window (the host's time, never a
seat's). The time a seat's action took is written on its entry (``Event.think_ms``), and a
time-out writes the whole allowance on its ``TimedOut``: the banks are folded from the log
(:class:`cardarena.v1.clocks.SeatClocks`), so a replica, a restart and the auditor agree on
them.
"""

from __future__ import annotations

from abc import abstractmethod

from cardarena.engine import Match, legal_actions_for
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1.clocks import ACTION_KINDS, SeatClocks, TimeControl

from .. import metrics
from ..store import LeaseLost, StoreError
from .clock import MoveClock, Reconnection
from .ending import Ending
from .subscribers import turn_after

RETRY_MS = 1000
"""After a time-out the store did not take, the least wait before the clock plays the seat
again: a store that refuses every write is retried, not hammered."""

_ACTIONS: dict[int, pb.Action] = {}
"""Each action as a message, made once per process (a few hundred at most, one per card and
kind of action): a YourTurn copies its legal actions from here, in half the time that making
each afresh takes (about 11 us against 25 for eight)."""


def action_message(action: int) -> pb.Action:
    made = _ACTIONS.get(action)
    if made is None:
        made = _ACTIONS[action] = codec.action_to_pb(action)
    return made


_LEGAL: dict[int, bytes] = {}
"""Each action as a YourTurn's ``legal_actions`` field, serialized, made once per process: a
prompt parses its legal actions from these bytes joined, in a third of the time that copying
each message into it takes (about 1.2 us against 4 for eight)."""


def _legal_field(action: int) -> bytes:
    made = _LEGAL.get(action)
    if made is None:
        made = _LEGAL[action] = pb.YourTurn(
            legal_actions=[action_message(action)]
        ).SerializeToString()
    return made


class Timing(Ending):
    """The clock half of :class:`~.match.HostedMatch` (its attributes are set there)."""

    engine: Match
    control: TimeControl
    banks: SeatClocks
    clock: MoveClock
    reconnection: Reconnection
    returning: set[int]
    _turn: int
    _turn_started: float
    """When the turn in progress was armed (Unix seconds)."""
    _turn_allowed: int
    """Its allowance by the clocks, milliseconds (without the reconnection window)."""
    _turn_window: int
    """What it was given on top of that, after an outage, milliseconds."""
    _armed: int
    """The turn (``_turn``) those three are of."""

    @abstractmethod
    async def _record(
        self,
        events: list[ev.Event],
        *,
        request_id: str | None,
        seat: int | None,
        timed_out: bool = False,
    ) -> tuple[int, int, list[pb.Event]]: ...

    def await_seats(self) -> None:
        """An outage just ended (or this match began inside its window): every seat is
        awaited until it opens a stream or acts (:class:`.clock.Reconnection`)."""
        if self.reconnection.left_ms(self.clock.keeper.now()):
            self.returning = set(range(len(self.seats)))

    def seat_back(self, seat: int) -> None:
        """``seat`` opened a stream: from now its clock runs as usual, and a turn of its that
        was waiting out the reconnection window gets its full allowance from now (never more
        time than it had: a seat back after the window closed keeps its deadline)."""
        if seat not in self.returning:
            return
        self.returning.discard(seat)
        allowed = self.banks.allowance_ms(seat)
        if allowed is None or seat != self.engine.to_act or not self.owned or not self.running:
            return
        if self.clock.keeper.now() + allowed / 1000 < self.clock.deadline:
            self._rearm_clock()
            self.readers.publish([], turn_after(self))  # the nearer deadline, no event

    def your_turn(self) -> pb.YourTurn:
        seat = self.engine.to_act
        turn = pb.YourTurn(seq=self.last_seq, deadline_unix_ms=int(self.clock.deadline * 1000))
        legal = legal_actions_for(self.engine, seat) if seat is not None else []
        turn.MergeFromString(b"".join([_legal_field(a) for a in legal]))
        if seat is not None:
            if self.control.bank_ms:
                turn.bank_ms = self.banks.bank[seat]
            if self.control.round_ms:
                turn.round_ms = self.banks.round[seat]
        return turn

    def _window_ms(self, seat: int) -> int:
        """What is left of the reconnection window for a seat still awaited after an outage."""
        if seat not in self.returning:
            return 0
        left = self.reconnection.left_ms(self.clock.keeper.now())
        if not left:
            self.returning.clear()  # the window is one for every seat: it has closed
        return left

    def _rearm_clock(self, *, at_least_ms: int = 0) -> None:
        """A new turn: the seat to act's allowance, or none at all for a seat that forfeited
        (the server plays it at once); ``at_least_ms`` after a time-out the store refused."""
        self.clock.stop()
        self._turn += 1
        seat = self.engine.to_act
        if not self.owned or not self.running or seat is None:
            return
        turn = self._turn
        if self.faults.forfeited[seat]:
            self.clock.start(lambda: self._expire(turn), delay_ms=at_least_ms)
            return
        allowed = self.banks.allowance_ms(seat)
        if allowed is None:
            return
        window = self._window_ms(seat)
        self._turn_started, self._armed = self.clock.keeper.now(), turn
        self._turn_allowed, self._turn_window = allowed, window
        self.clock.start(lambda: self._expire(turn), delay_ms=max(allowed + window, at_least_ms))

    def charge(self, entries: list[pb.Event], seat: int) -> None:
        """Write on ``seat``'s action entry (the first of ``entries``) the time it took since
        its turn was armed, less any reconnection window it was given."""
        if not self.control.timed or not entries or self._armed != self._turn:
            return  # no clock, or none armed for this turn here: nothing to charge
        entry = entries[0]
        kind = entry.WhichOneof("kind")
        if kind not in ACTION_KINDS or getattr(entry, kind).seat != seat:
            return
        elapsed = round((self.clock.keeper.now() - self._turn_started) * 1000)
        entry.think_ms = max(0, elapsed - self._turn_window)

    async def _expire(self, turn: int) -> None:
        """The seat to act ran out of time: the server plays its default action. A write
        whose outcome this process could not know leaves the match out of step with its log
        (:meth:`_recover`): the log is read again first, as before an action, so a time-out
        is never played on a state the log does not have. If the store takes neither, the
        clock runs again (after :data:`RETRY_MS` at least): a match is never left waiting
        for a time-out nobody will play."""
        async with self.lock:
            if turn != self._turn or not self.owned or not self.running:
                return
            try:
                if self._out_of_step:
                    await self._resync()
                seat = self.engine.to_act
                if turn != self._turn or not self.owned or not self.running or seat is None:
                    return  # the log moved on (a write of its own that landed re-armed it)
                events = self.engine.apply(seat, self.engine.default_action())
                metrics.ACTIONS.inc()
                self.log.info("timed_out", seat=seat)
                await self._record(events, request_id=None, seat=seat, timed_out=True)
            except (LeaseLost, StoreError) as error:  # rebuilt from the store; nothing to answer
                self.log.warning("timeout_not_recorded", error=str(error))
                if turn == self._turn:  # nothing the store held re-armed it
                    self._rearm_clock(at_least_ms=RETRY_MS)
