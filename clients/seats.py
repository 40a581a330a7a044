"""A bot in a tournament seat, behind a guard that turns every misbehaviour into a counted fault.

Why a guard: one broken contestant must never stop a tournament nor hold up other matches.
The policy (also in ``docs/bot-protocol.md``):

* **crash** (the bot raised, or its program could not start, did not say it was ready, or
  died): the runner plays the seat's lowest legal action, which is the server's own timeout
  default, and records a fault. A Python bot is asked again next turn; a dead program is not
  (the seat is *benched*: the runner plays its lowest legal action to the end of the match).
* **timeout** (no answer within the decision time): fault, lowest legal action, and the seat
  is benched for the rest of the match, its program killed. A late answer can then never be
  mistaken for the answer to a later turn, and a stuck Python thread is not asked again.
* **illegal** (an action that is not legal, or an answer that is not one): fault, lowest legal
  action; the bot is asked again next turn.
* **late**: the server's clock (``--move-ms``) ran out and the server itself played the default
  (a ``TimedOut`` event for the seat); counted, nothing else to do.

Every move the runner makes for a bot is counted as a *fallback*. Decisions are awaited, never
run on the event loop: a Python bot thinks in a daemon thread (a hung one is abandoned, and a
daemon thread does not keep the process alive), a program is read asynchronously.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cardarena.v1 import game_pb2 as pb

from .bots.base import Bot
from .seatstate import SeatState

NOTES_KEPT = 5
START_TIMEOUT_S = 10.0
"""Time to start and say ready: a program's start-up is not held against its first move."""


class BotGone(Exception):
    """The bot can no longer be asked (its program exited or closed its pipes)."""


class IllegalAnswer(Exception):
    """The bot answered something that is not one of the legal actions."""


@dataclass(frozen=True)
class SeatContext:
    """What a seat is told when its match starts."""

    match_id: str
    game: str
    seat: int
    players: int
    names: tuple[str, ...]
    options: dict[str, Any]
    lowest_wins: bool
    decision_ms: int


@dataclass
class Faults:
    """Faults of one bot, for one seat or summed over a tournament."""

    crashes: int = 0
    timeouts: int = 0
    illegal: int = 0
    late: int = 0
    fallbacks: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.crashes + self.timeouts + self.illegal + self.late

    def note(self, text: str) -> None:
        if len(self.notes) < NOTES_KEPT:
            self.notes.append(text)

    def add(self, other: Faults) -> None:
        self.crashes += other.crashes
        self.timeouts += other.timeouts
        self.illegal += other.illegal
        self.late += other.late
        self.fallbacks += other.fallbacks
        for text in other.notes:
            self.note(text)

    def as_dict(self) -> dict[str, Any]:
        return {
            "crashes": self.crashes,
            "timeouts": self.timeouts,
            "illegal": self.illegal,
            "late": self.late,
            "fallbacks": self.fallbacks,
            "notes": list(self.notes),
        }


class Decider(Protocol):
    """One seat's bot as the runner drives it: told the match, shown events, asked to act."""

    async def start(self, context: SeatContext) -> None: ...
    def observe(self, event: pb.Event) -> None: ...
    async def decide(self, state: SeatState) -> int: ...
    async def finish(self, state: SeatState) -> None: ...
    def abandon(self) -> None: ...


class PythonDecider:
    """A Python :class:`Bot`, made fresh for the match, thinking in a daemon thread."""

    def __init__(self, factory: Callable[[], Bot]) -> None:
        self._factory = factory
        self._bot: Bot | None = None

    async def start(self, context: SeatContext) -> None:
        self._bot = self._factory()

    def observe(self, event: pb.Event) -> None:
        pass

    async def decide(self, state: SeatState) -> int:
        if self._bot is None:
            raise BotGone("the bot was never made")
        action: Any = await in_thread(self._bot.choose, state)
        if not isinstance(action, int) or isinstance(action, bool):
            raise IllegalAnswer(f"choose returned {action!r}, not an action id")
        return action

    async def finish(self, state: SeatState) -> None:
        self._bot = None

    def abandon(self) -> None:
        self._bot = None


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
            self._bench(f"timeout at start ({self.start_timeout_s:g} s)", timeout=True)
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
        fallback = min(state.legal)
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


async def in_thread(function: Callable[[SeatState], Any], state: SeatState) -> Any:
    """Run ``function(state)`` in a fresh daemon thread and await its result.

    Not ``asyncio.to_thread``: its pool joins its threads at exit, so one hung bot would hang
    the whole program after the tournament.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: Exception | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            result, error = function(state), None
        except BaseException as raised:  # SystemExit from a bot is a crash too
            wrapped = (
                raised if isinstance(raised, Exception) else RuntimeError(describe_error(raised))
            )
            result, error = None, wrapped
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for it any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name="bot-decision", daemon=True).start()
    return await future


def describe_error(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def merge(faults: Sequence[Faults]) -> Faults:
    total = Faults()
    for item in faults:
        total.add(item)
    return total
