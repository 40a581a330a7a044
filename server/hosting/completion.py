"""Work that must finish even when its caller is cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_STEADY: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
"""Tasks whose owner never cancels them while they await work :func:`to_completion`."""


def steady(task: asyncio.Task[Any]) -> None:
    """Promise that ``task`` is never cancelled in the middle of work it runs
    :func:`to_completion` (its owner cancels it only between such works, as a Play call's
    acting task is): that work then runs in it directly, without a task of its own."""
    _STEADY.add(task)


def to_completion(work: Coroutine[Any, Any, T]) -> Awaitable[T]:
    """Run ``work`` to its end even if the caller is cancelled.

    Why: gRPC cancels a handler when its client hangs up (or a forwarding replica dies), and a
    handler cancelled between applying an action to the engine and recording what the store
    committed would leave the match in memory out of step with its log. The caller still
    gets the outcome, or its cancellation; the work finishes either way. In a :func:`steady`
    task, which nobody cancels mid-way, the work is awaited as it is: a task and a shield
    for every action cost the event loop about 8 us and two more turns.
    """
    if asyncio.current_task() in _STEADY:
        return work
    task = asyncio.ensure_future(work)
    outcome: asyncio.Future[T] = task.get_loop().create_future()

    def done(task: asyncio.Future[T]) -> None:
        """The task's outcome handed to the caller, if it still waits (``asyncio.shield``
        with one callback instead of three: this runs once per unary action)."""
        if outcome.cancelled():  # the caller is gone: mark the error seen (no asyncio
            if not task.cancelled():  # warning); whatever went wrong was logged where it did
                task.exception()
        elif task.cancelled():
            outcome.cancel()
        elif (error := task.exception()) is not None:
            outcome.set_exception(error)
        else:
            outcome.set_result(task.result())

    task.add_done_callback(done)
    return outcome


async def cancel_and_wait(task: asyncio.Task[Any] | None) -> None:
    """Stop a task this process started (a keeper, a sweeper, an accept loop) and wait until
    it has: its cancellation is the outcome expected, anything else it raises is not."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def end_child(process: asyncio.subprocess.Process, seconds: float) -> None:
    """Ask a child process of this server to exit by closing its stdin (the children read it
    until it closes), and kill it if it has not within ``seconds``."""
    if process.returncode is not None:
        return
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), seconds)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


class Background:
    """Tasks started and not awaited (following a match, revealing a seed): kept referenced
    until they end, a failure logged as ``event``, so that none is garbage-collected mid-way."""

    def __init__(self, log: Any, event: str) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self._log = log
        self._event = event

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log.warning(self._event, error=str(task.exception()))
