"""Work that must finish even when its caller is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def to_completion(work: Coroutine[Any, Any, T]) -> Awaitable[T]:
    """Run ``work`` to its end even if the caller is cancelled.

    Why: gRPC cancels a handler when its client hangs up (or a forwarding replica dies), and a
    handler cancelled between applying an action to the engine and recording what the store
    committed would leave the match in memory out of step with its log. The caller still
    gets the outcome, or its cancellation; the work finishes either way.
    """
    task = asyncio.ensure_future(work)
    task.add_done_callback(_retrieve)
    return asyncio.shield(task)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a shielded task's exception as seen when its caller is gone (no asyncio warning);
    whatever went wrong was logged where it happened."""
    if not task.cancelled():
        task.exception()
