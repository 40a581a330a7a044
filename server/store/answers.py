"""What the writer thread is handed (a request: work and the caller's future) and how it
answers: once per batch and per loop, on the loop.

Why a module apart from the writer: the answering is the writer's only touch of the callers'
event loops, and the part of the store's work that the event loop itself pays for.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import structlog

from .. import metrics
from .errors import StoreClosed
from .schema import Connection

log = structlog.get_logger(__name__)

T = TypeVar("T")


@dataclass(slots=True)
class Request(Generic[T]):
    """A unit of work for the writer thread and the caller's future to settle with its result."""

    work: Callable[[Connection], T]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[T]


def settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """Runs on the caller's loop. A caller that was cancelled meanwhile just misses the news
    (the write itself stands: that is what request ids are for)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


Outcome = tuple[Request[Any], Any, BaseException | None]
"""A request, and the result or the error to settle its future with."""


def settle_all(outcomes: list[Outcome]) -> None:
    """Runs on the callers' loop: every caller of the batch is answered, whatever one
    answer does (a future that cannot take its exception must not strand the others)."""
    if metrics.STAGE_TIMES:
        metrics.begin()
    for request, result, error in outcomes:
        try:
            settle(request.future, result, error)
        except Exception:
            log.exception("store answer failed")
    if metrics.STAGE_TIMES:
        metrics.lap("store: answer")


def answer(outcomes: list[Outcome]) -> None:
    """Hand requests' outcomes to their callers' loops, from the writer thread: one wake-up
    of each loop for the whole batch, not one per request."""
    by_loop: dict[asyncio.AbstractEventLoop, list[Outcome]] = {}
    for outcome in outcomes:
        by_loop.setdefault(outcome[0].loop, []).append(outcome)
    for loop, settled in by_loop.items():
        # RuntimeError: the caller's loop is closed, so nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle_all, settled)


def fail_queued(jobs: queue.SimpleQueue[object]) -> None:
    """Answer anything still queued when the writer stops (only after a crash: close() stops
    accepting work before it queues the stop marker)."""
    while True:
        try:
            item = jobs.get_nowait()
        except queue.Empty:
            return
        if isinstance(item, Request):
            answer([(item, None, StoreClosed("store writer stopped"))])
