"""Anonymous reads take turns: one at a time, on at most a share of the event loop, served
fairly among the addresses that wait.

Why: every call runs on the one event loop that also applies the players' actions. A read
(a page of matches, a tournament, an ended match's log) costs milliseconds of that loop, and
anyone may make as many as they like from as many addresses as they hold; eight callers
looping them kept the loop busy all the time and the players' actions waited behind them
(issue 29). Per-address rates cannot bound that (a flood comes from many addresses), and a
server-wide rate would be too tight for a quiet server or too loose for a busy one. So the
gate bounds what readers cost the players, not how often they call: at most one anonymous
read runs at a time, and after a read that held the gate for ``t`` seconds it stays shut
for ``t * (1 / share - 1)``, so anonymous reads together hold the loop at most ``share`` of
the time, in chunks no longer than one read. Waiting readers are served one address after
another (round robin), so an address that sends a hundred waits its turn behind one that
sends one. A caller who proves who it is (the operator, another replica) is never gated.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..errors import Throttled
from .status import Context

READ_SHARE = 0.25
"""The share of the event loop anonymous reads may hold together (``serve --read-share``)."""

WAITING_FLOOR = 4
"""Reads one address may have waiting once half the queue is taken."""

MAX_COOLDOWN = 1.0
"""Seconds the gate stays shut after one read at most, however long the read took: one
pathological read must not lock every reader out for long."""


@dataclass(frozen=True)
class ReadLimits:
    """How the gate queues: ``share`` of the loop (1: no pause between reads); ``waiting``
    calls queued in all and ``per_address`` from one address, or once half the queue is
    taken :data:`WAITING_FLOOR`, so that the other half is there for newcomers however many
    addresses came first (beyond either: refused at once, RESOURCE_EXHAUSTED with a retry
    delay); a call that waited ``wait_seconds`` is refused the same way rather than queued
    for ever."""

    share: float = READ_SHARE
    waiting: int = 1024
    per_address: int = 32
    wait_seconds: float = 2.0

    def __post_init__(self) -> None:
        if not 0 < self.share <= 1:
            raise ValueError(f"the read share is 0 < share <= 1, got {self.share}")


class ReadGate:
    """The turn-taking of anonymous reads (see the module's docstring)."""

    def __init__(
        self, limits: ReadLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or ReadLimits()
        self.clock = clock
        self._running = False
        self._open_at = 0.0
        """When the gate opens after the last read's pause (by ``clock``)."""
        self._queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self._waiting = 0
        self._wake: asyncio.TimerHandle | None = None

    @property
    def waiting(self) -> int:
        return self._waiting

    @asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """Hold the gate for one read from ``address``; wait for it, fairly, or be refused."""
        if self._running or self._waiting or self.clock() < self._open_at:
            await self._wait(address)
        else:
            self._running = True
        started = self.clock()
        try:
            yield
        finally:
            now = self.clock()
            pause = min(MAX_COOLDOWN, (now - started) * (1 / self.limits.share - 1))
            self._open_at = now + pause
            self._running = False
            self._schedule()

    async def _wait(self, address: str) -> None:
        queue = self._queues.get(address)
        crowded = self._waiting >= self.limits.waiting // 2
        mine = min(self.limits.per_address, WAITING_FLOOR if crowded else self.limits.waiting)
        if self._waiting >= self.limits.waiting or (queue is not None and len(queue) >= mine):
            raise self._refusal("too many reads are waiting")
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if queue is None:
            queue = self._queues[address] = deque()
        queue.append(waiter)
        self._waiting += 1
        self._schedule()
        try:
            # Not wait_for: on 3.11 it swallows a cancel that comes as the turn is given, and
            # the read of a call that is gone would run (for ever, if it awaits for ever).
            # The shield: only this task's wait is cancelled, never the waiter, which the
            # gate may be giving its turn to meanwhile.
            async with asyncio.timeout(self.limits.wait_seconds):
                await asyncio.shield(waiter)
        except (TimeoutError, asyncio.CancelledError) as error:
            if waiter.done() and not waiter.cancelled():  # the turn came as it gave up: pass it on
                self._running = False
                self._schedule()
            else:
                waiter.cancel()
                self._forget(address, waiter)
            if isinstance(error, TimeoutError):
                raise self._refusal("reads waited too long") from None
            raise

    def _forget(self, address: str, waiter: asyncio.Future[None]) -> None:
        queue = self._queues.get(address)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            self._waiting -= 1
            if not queue:
                del self._queues[address]

    def _schedule(self) -> None:
        """Give the gate to the next address's first waiter once it is open, now or later."""
        if self._running or not self._waiting:
            return
        delay = self._open_at - self.clock()
        if delay > 0:
            if self._wake is None or self._wake.cancelled():
                self._wake = asyncio.get_running_loop().call_later(delay, self._woken)
            return
        address, queue = next(iter(self._queues.items()))
        waiter = queue.popleft()
        self._waiting -= 1
        del self._queues[address]
        if queue:  # its next call goes to the back: the others' first calls come first
            self._queues[address] = queue
        self._running = True
        waiter.set_result(None)

    def _woken(self) -> None:
        self._wake = None
        self._schedule()

    def _refusal(self, why: str) -> Throttled:
        retry_ms = max(1, int(max(0.0, self._open_at - self.clock()) * 1000) + 50)
        return Throttled(
            f"{why}: anonymous reads take turns on this server (at most"
            f" {self.limits.share:.0%} of its time); retry in {retry_ms} ms",
            retry_ms,
        )


class Reading(Protocol):
    def reading(self, context: Context) -> AbstractAsyncContextManager[None]: ...


class Gated(Protocol):
    """A servicer whose guard gates its anonymous reads (:meth:`access.Guard.reading`)."""

    @property
    def guard(self) -> Reading: ...


S = TypeVar("S", bound=Gated)
Q = TypeVar("Q")
R = TypeVar("R")


def gated(
    handler: Callable[[S, Q, Context], Awaitable[R]],
) -> Callable[[S, Q, Context], Awaitable[R]]:
    """A read that takes its turn at the gate unless its caller proved who it is; under
    ``@unary``, so that a refusal ends the call RESOURCE_EXHAUSTED with its retry delay."""

    @functools.wraps(handler)
    async def call(service: S, request: Q, context: Context) -> R:
        async with service.guard.reading(context):
            return await handler(service, request, context)

    return call
