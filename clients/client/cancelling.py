"""Cancelling tasks that may be inside a gRPC call, so that they really end.

Why a module: grpc.aio can lose a cancellation. A task cancelled while gRPC sets up one of its
calls (connecting, awaiting the first response) may have the ``CancelledError`` caught inside
grpc.aio's own code, which then returns or fails the call as if the server had refused it, so
the task goes on as if nothing happened: retrying a dead server for its whole ``retry_for``,
or playing on. Cancelling once and awaiting (``task.cancel(); await task``, a TaskGroup's
abort, ``asyncio.wait_for``'s time-out in Python 3.11) then waits that long, or forever. Every
client that cancels such a task uses these helpers instead, which cancel again until it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, Final, TypeVar

T = TypeVar("T")

RECANCEL_AFTER_S: Final = 0.1
"""How long a cancelled task is given to end before it is cancelled again: enough for a task
that heeds its cancellation to end, short enough that a lost one costs nobody a wait."""


CLEANUP_S: Final = 3.0
"""How long a cancelled task that cleans up after itself is given before it is cancelled
again: a match's seats tell their external bots the match is over and give each
``EXIT_GRACE_S`` (2 s) to exit."""


async def cancel_until_ended(
    tasks: Iterable[asyncio.Task[Any]], grace: float = RECANCEL_AFTER_S
) -> None:
    """Cancel every task and wait until each has ended: any still running ``grace`` seconds
    later is cancelled again (its cancellation was lost, or its cleanup takes too long), and
    again every :data:`RECANCEL_AFTER_S` until it ends."""
    running = {task for task in tasks if not task.done()}
    wait = grace
    while running:
        for task in running:
            task.cancel()
        _, running = await asyncio.wait(running, timeout=wait)
        wait = RECANCEL_AFTER_S


async def wait_within(awaitable: Awaitable[T], seconds: float) -> T:
    """``asyncio.wait_for`` that keeps its bound: the result of ``awaitable`` if it ends
    within ``seconds``, else ``TimeoutError`` once it has been cancelled until it ended (it is
    also cancelled so if this task is). ``asyncio.wait_for`` instead cancels it once and waits
    for it to end, however long that takes when the cancellation is lost."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    finally:
        await cancel_until_ended({task})
    if task not in done:
        if not task.cancelled():
            task.exception()  # what it ended with is beside the point: the time-out is told
        raise TimeoutError(f"not done within {seconds:g} s")
    return task.result()


async def gather_or_cancel(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Run ``awaitables`` at once, as an ``asyncio.TaskGroup`` does: their results in order,
    or, once one fails (or this task is cancelled), the others cancelled until they ended and
    the failures raised together in an ``ExceptionGroup``. A TaskGroup cancels the others once
    only, and then waits as long as one whose cancellation was lost runs on. The others are
    given :data:`CLEANUP_S` to end before they are cancelled again."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        if tasks:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        await cancel_until_ended(tasks, CLEANUP_S)
    failures = [e for t in tasks if not t.cancelled() and (e := t.exception()) is not None]
    if failures:
        raise BaseExceptionGroup("unhandled errors in gather_or_cancel", failures)
    return [task.result() for task in tasks]
