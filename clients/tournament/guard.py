"""A bot in a tournament seat, behind a guard that turns every misbehaviour into a counted fault.

Why a guard: one broken contestant must never stop a tournament nor hold up other matches.
The policy (also in ``docs/bot-protocol.md``):

* **crash** (the bot raised, or its program could not start, did not say it was ready, or
  died): the runner plays the seat's default action, the server's own time-out default (the
  pass where it is legal, else the lowest legal action: ``engine.default_action``), and
  records a fault. A Python bot is asked again next turn; a dead program is not (the seat is
  *benched*: the runner plays its default actions to the end of the match).
* **timeout** (no answer within the decision time): fault, default action, and the seat
  is benched for the rest of the match, its program killed. A late answer can then never be
  mistaken for the answer to a later turn, and a stuck Python thread is not asked again.
* **illegal** (an action that is not legal, or an answer that is not one): fault, default
  action; the bot is asked again next turn.
* **late**: the server's clock (``--move-ms``) ran out and the server itself played the default
  (a ``TimedOut`` event for the seat); counted, nothing else to do.

Every move the runner makes for a bot is counted as a *fallback*. Decisions are awaited, never
run on the event loop: a Python bot thinks in a daemon thread (a hung one is abandoned, and a
daemon thread does not keep the process alive), a program is read asynchronously.
"""

from __future__ import annotations

import asyncio

from cardarena.engine import default_action
from cardarena.v1 import game_pb2 as pb

from ..bots.decider import BotGone, Decider, IllegalAnswer, SeatContext, describe_error
from ..bots.external import STARTUP_S
from ..bots.state import SeatState
from .faults import Faults

START_TIMEOUT_S = STARTUP_S
"""Time to start and say ready (the start-up allowance, or a move's time if longer): the match
is dealt only after every seat's bot started, so a program's start-up is no move's."""


class GuardedSeat:
    """A :class:`Decider` whose every failure is a fault and a fallback, never an exception."""

    def __init__(self, decider: Decider, *, timeout_s: float) -> None:
        self.decider = decider
        self.timeout_s = timeout_s
        self.start_timeout_s = max(timeout_s, START_TIMEOUT_S)
        self.faults = Faults()
        self.benched = False

    async def start(self, context: SeatContext) -> None:
        try:
            await asyncio.wait_for(self.decider.start(context), self.start_timeout_s)
        except TimeoutError:
            self._bench(
                f"timeout at start: not ready within {self.start_timeout_s:g} s (the start-up"
                " allowance)",
                timeout=True,
            )
        except Exception as error:  # any failure to start is the bot's fault
            self._bench(f"crash at start: {describe_error(error)}", timeout=False)

    def observe(self, state: SeatState, event: pb.Event) -> None:
        """The client's ``on_event`` hook: count server time-outs, pass events on."""
        if event.WhichOneof("kind") == "timed_out" and event.timed_out.seat == state.seat:
            self.faults.late += 1
            self.faults.note(f"late at seq {event.seq}: the server's clock played the default")
        if not self.benched:
            try:
                self.decider.observe(event)
            except Exception as error:
                self._bench(f"crash on event {event.seq}: {describe_error(error)}", timeout=False)

    async def decide(self, state: SeatState) -> int:
        fallback = default_action(state.legal)
        if self.benched:
            self.faults.fallbacks += 1
            return fallback
        try:
            action = await asyncio.wait_for(self.decider.decide(state), self.timeout_s)
        except TimeoutError:
            self._bench(f"timeout at seq {state.seq} ({self.timeout_s:g} s)", timeout=True)
        except BotGone as error:
            self._bench(f"crash at seq {state.seq}: {error}", timeout=False)
        except IllegalAnswer as error:
            self._fault("illegal", f"illegal at seq {state.seq}: {error}")
        except Exception as error:  # whatever a bot raises is a crash
            self._fault("crash", f"crash at seq {state.seq}: {describe_error(error)}")
        else:
            if action in state.legal:
                return action
            self._fault("illegal", f"illegal at seq {state.seq}: {action} is not legal")
        self.faults.fallbacks += 1
        return fallback

    async def finish(self, state: SeatState) -> None:
        """Tell the bot the match is over and let it go; never raises."""
        try:
            await asyncio.wait_for(self.decider.finish(state), self.timeout_s)
        except Exception:  # the match is over; only the clean-up is at stake
            self.decider.abandon()

    def _fault(self, kind: str, note: str) -> None:
        if kind == "crash":
            self.faults.crashes += 1
        else:
            self.faults.illegal += 1
        self.faults.note(note)

    def _bench(self, note: str, *, timeout: bool) -> None:
        if timeout:
            self.faults.timeouts += 1
        else:
            self.faults.crashes += 1
        self.faults.note(note + "; benched for the rest of the match")
        self.benched = True
        self.decider.abandon()
