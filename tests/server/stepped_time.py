"""A move clock's time that a test moves by hand (a :class:`~cardarena.server.hosting.clock.Timekeeper`).

A test of a move clock running down need not wait for it: it moves the time past a deadline
and is back once every timer that came due has fired and its expiry has run to the end, so
what it asserts next sees whatever the expiry did (or, if no timer was due, that nothing did).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass


@dataclass
class _Sleeper:
    until: float
    woken: asyncio.Future[None]
    timer: asyncio.Task[object]


class SteppedTime:
    """Starts at the machine's time; stands still until :meth:`advance`."""

    def __init__(self) -> None:
        self._now = time.time()
        self._sleepers: list[_Sleeper] = []

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Until the time is moved ``seconds`` on (a timer cancelled meanwhile just stops)."""
        timer = asyncio.current_task()
        assert timer is not None, "a move clock sleeps in its timer's task"
        woken = asyncio.get_running_loop().create_future()
        self._sleepers.append(_Sleeper(self._now + seconds, woken, timer))
        await woken

    async def advance(self, seconds: float) -> None:
        """Move the time ``seconds`` on; return once every timer this makes due has finished."""
        self._now += seconds
        due = [s for s in self._sleepers if s.until <= self._now and not s.woken.done()]
        self._sleepers = [s for s in self._sleepers if s.until > self._now]
        for sleeper in due:
            sleeper.woken.set_result(None)
        for sleeper in due:
            await sleeper.timer
