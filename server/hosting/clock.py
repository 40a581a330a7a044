"""A match's move clock: one timer at a time, and the deadline its readers are told.

Timeouts are the server's, never the engine's: when the timer fires the match plays the
seat's default action (see ``HostedMatch``); the clock only keeps time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final, Protocol

from cardarena.v1 import game_pb2 as pb


class Timekeeper(Protocol):
    """Where a move clock reads the time and waits: the wall clock and the event loop's timers,
    or, in a test, a clock that moves only when the test moves it."""

    def now(self) -> float:
        """Unix seconds."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class WallTime:
    """The time of the machine, waited for on the event loop."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


WALL_TIME: Final = WallTime()

RECONNECT_GRACE_S: Final = 30.0
"""How long seats are given to come back after an outage (a restart, a replica taking a match
over) before their move clocks run: ``serve --reconnect-grace``."""


class Reconnection:
    """The window after an outage in which seats not yet back are not timed.

    The time the server was not serving is the host's, never a seat's: a bot cannot answer a
    server that is down, and needs a moment to reconnect once it is up. Until a seat is back
    (it opened a stream of its own or acted) and while the window is open, each of its turns
    gets the rest of the window on top of a full move; once it is back, a full move from then.
    One window per arena, opened when it resumes matches or tournaments, shared by them all.
    """

    def __init__(self, grace_s: float = RECONNECT_GRACE_S) -> None:
        self.grace_s = grace_s
        self.until = 0.0
        """Unix seconds at which the window closes; 0: never opened."""

    def open(self, now: float) -> None:
        """An outage just ended: seats not yet back have ``grace_s`` from ``now``."""
        self.until = max(self.until, now + self.grace_s)

    def left_ms(self, now: float) -> int:
        """What is left of the window (0 once it has closed)."""
        return max(0, int((self.until - now) * 1000))


_EXPIRING: set[asyncio.Task[None]] = set()
"""Expiries under way (a move clock that fired): kept referenced until they end."""


class MoveClock:
    """``move_ms`` per move (0: no clock), kept by ``keeper``."""

    def __init__(self, move_ms: int, keeper: Timekeeper = WALL_TIME) -> None:
        self.move_ms = move_ms
        self.keeper = keeper
        self.deadline = 0.0
        """Unix seconds by which the seat to act must act; 0: none."""
        self._timer: asyncio.Task[None] | None = None
        self._handle: asyncio.TimerHandle | None = None
        """The event loop's timer, on the wall clock: a task is made only if it fires."""

    def start(
        self, expire: Callable[[], Coroutine[Any, Any, None]], *, delay_ms: int | None = None
    ) -> None:
        """A full move's time from now (or ``delay_ms``), then ``expire()`` (any running timer
        is stopped).

        Why a loop timer and not a task that sleeps: the clock is started and stopped at every
        action of a timed match, and a task costs its creation, a first step to go to sleep
        and another to be cancelled (about 10 us of the event loop), a timer a fifth of that.
        A keeper of its own (a test's) keeps a task that sleeps on it."""
        self.stop()
        delay = self.move_ms if delay_ms is None else delay_ms
        self.deadline = self.keeper.now() + delay / 1000
        if self.keeper is WALL_TIME:
            self._handle = asyncio.get_running_loop().call_later(delay / 1000, self._fire, expire)
        else:
            self._timer = asyncio.create_task(self._run(expire, delay / 1000))

    def _fire(self, expire: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._handle = None
        task = asyncio.ensure_future(expire())
        _EXPIRING.add(task)  # referenced until it ends, as the timer's task was
        task.add_done_callback(_EXPIRING.discard)

    def estimate(
        self,
        waiting: bool,
        entries: Sequence[pb.Event] | None = None,
        *,
        at_once: bool = False,
        move_ms: int | None = None,
    ) -> None:
        """A follower's idea of the owner's deadline after reading ``entries``: a full move
        (``move_ms``, the seat's allowance, or the per-move clock) from now (it reads the
        owner's events milliseconds late, so it errs late by that much); now, ``at_once``,
        when the seat to act has forfeited (the owner plays it at once, clock or none).
        Faults alone restart no clock (a fault never buys time): after them the estimate
        stands."""
        if at_once:
            self.deadline = self.keeper.now()
        elif not waiting:
            self.deadline = 0.0
        elif not self.deadline or entries is None or restarts(entries):
            allowed = self.move_ms if move_ms is None else move_ms
            self.deadline = self.keeper.now() + allowed / 1000

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.deadline = 0.0

    async def _run(self, expire: Callable[[], Coroutine[Any, Any, None]], delay: float) -> None:
        await self.keeper.sleep(delay)
        self._timer = None
        await expire()


def restarts(entries: Sequence[pb.Event]) -> bool:
    """Whether the owner restarted its clock when it wrote ``entries``: anything but faults
    that forfeit nothing (a forfeit does: the server plays the seat at once)."""
    return any(entry.WhichOneof("kind") != "seat_faulted" for entry in entries)
