"""Waiting for something to happen, not for a while: the one polling loop of the tests.

A test that must wait for a condition it cannot await (a count in another process, a row
another thread writes, a gauge on a metrics page) polls it here, often and for a bounded
time, and fails saying what it waited for. Sleeping a fixed time instead is either too short
on a busy machine or too long everywhere.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

WITHIN = 10.0
"""How long a condition may take to come true, unless the caller says otherwise."""
EVERY = 0.05
"""How often it is looked at."""


@overload
async def eventually(
    condition: Callable[[], Awaitable[T | None]],
    *,
    within: float = ...,
    every: float = ...,
    what: str = ...,
) -> T: ...


@overload
async def eventually(
    condition: Callable[[], T | None],
    *,
    within: float = ...,
    every: float = ...,
    what: str = ...,
) -> T: ...


async def eventually(
    condition: Callable[[], Any],
    *,
    within: float = WITHIN,
    every: float = EVERY,
    what: str = "the condition",
) -> Any:
    """Wait, on the event loop, until ``condition()`` (awaited if it is a coroutine) returns
    something true, and return that; fail after ``within`` seconds. An exception raised by
    ``condition`` (an assertion, say) ends the wait with that exception."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {within} s for {what}")
        await asyncio.sleep(every)


def wait_until(
    condition: Callable[[], T | None],
    *,
    within: float = WITHIN,
    every: float = EVERY,
    what: str = "the condition",
) -> T:
    """:func:`eventually` for code without an event loop: blocks this thread while polling."""
    deadline = time.monotonic() + within
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {within} s for {what}")
        time.sleep(every)
    return value
