"""Refused connections held a moment before their 503, so that retries come at the pace of
``Retry-After``, not of a round trip.

Why: a client refused at once and retrying at once refuses itself again within a
millisecond. Measured by ``scripts/bench_flood.py`` (issue 29), 1,100 idle connections from
40 addresses, each opened again 50 ms after its 503, made the gateway accept and refuse about
10,000 connections a second: a quarter of a core in the gateway and the kernel's loopback
work beside it, which doubled a victim match's p99 on a two-CPU machine. Held for the second
the 503's ``Retry-After`` asks for, the same clients come back about 800 times a second.

A held connection costs a file descriptor and a place in a queue (no task, no read: what
the client sends is left in the kernel's buffer and discarded with the socket). At most
``capacity`` are held; beyond it a refusal is answered at once, as it was before, so the
hold bounds the file descriptors it takes however many are refused. One timer answers every
connection that is due.

Each hold is the delay give or take a random :data:`JITTER` of it, as retries with backoff are
jittered: held for exactly a second, a flood that came at once stayed in step, and its 1,100
connections were answered, reconnected and accepted together, once a second, a burst of the
gateway's and the kernel's work the victim's slowest actions fell in (the idle flood: p99
2.0-2.2x quiet in 60 s windows). Spread over a second, the same work is a steady trickle.

The more connections are held, the longer each new one is (:func:`stretch`): one delay more
for each :data:`HELD_STEP` held, up to :data:`MAX_STRETCH` delays, and its ``Retry-After``
says so. A refusal now and then waits about the delay. Under a flood the number held is what
the flood has open, however long each waits, so a longer hold costs no more file descriptors
and cuts in proportion the accepts, 503s and reconnections the flood drives: the idle
flood's 1,100 connections from 250 addresses (about four each, as many browsers would
hold), some 850 of them held at any time, came back about 900 times a second held a second
each, and about a quarter as often held four. Counting per address would not have slowed
them: spread over 250 addresses, each held about as many as one browser opens. A browser
refused during such a flood (it would be refused again at once) hears so later.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import random
import resource
import socket
from typing import Final

REFUSAL_DELAY: Final = 1.0
"""How long a refused connection waits for its 503: the ``Retry-After`` it is given."""
MAX_HELD: Final = 4096
"""At most this many refused connections held at once (each is a file descriptor)."""
FD_MARGIN: Final = 128
"""File descriptors kept free beside the admitted and the held connections (the gRPC channel,
static files, the logs, the interpreter's own)."""
GRANULARITY: Final = 0.05
"""The timer answers whatever is due within this much of its deadline, in one wake-up."""
JITTER: Final = 0.25
"""A hold is the delay times a random factor from ``1 - JITTER`` to ``1 + JITTER``."""
HELD_STEP: Final = 256
"""Each this many connections held stretch the next hold by one delay (the default cap on
admitted connections: a hold that full is a flood's)."""
MAX_STRETCH: Final = 4
"""At most this many times the delay is a connection held."""


def busy(retry_after: int) -> bytes:
    """The 503 written straight to a connection refused admission, which is never read."""
    return (
        b"HTTP/1.1 503 Service Unavailable\r\nAccess-Control-Allow-Origin: *\r\n"
        b"Retry-After: %d\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" % retry_after
    )


BUSY: Final = tuple(busy(seconds) for seconds in range(MAX_STRETCH * 2 + 2))
"""The 503 by its ``Retry-After``, in whole seconds (each answer is one of a few)."""


def refuse_now(conn: socket.socket, retry_after: float = REFUSAL_DELAY) -> None:
    """Answer 503 and close ``conn`` (a write that fails, the client gone, is no matter),
    asking it to wait ``retry_after`` seconds (rounded, at least one) before it tries again."""
    answer = BUSY[min(len(BUSY) - 1, max(1, round(retry_after)))]
    with contextlib.suppress(OSError):
        conn.setblocking(False)
        conn.send(answer)
    conn.close()


def hold_capacity(max_connections: int, wanted: int = MAX_HELD) -> int:
    """How many refused connections may be held beside ``max_connections`` admitted ones
    within this process's file descriptor limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(0, min(wanted, soft - max_connections - FD_MARGIN))


def raise_fd_limit(wanted: int) -> None:
    """Raise this process's soft file descriptor limit towards ``wanted`` (never past the hard
    limit, never lower): a gateway's sockets are its whole business, as for any server."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def stretch(held: int) -> float:
    """How many delays a refused connection is held while ``held`` others are: about one
    while few are, growing with a flood, at most :data:`MAX_STRETCH`."""
    return min(float(MAX_STRETCH), 1.0 + held / HELD_STEP)


def jittered(delay: float) -> float:
    """``delay`` give or take :data:`JITTER` of it (not a secret: any source will do)."""
    return delay * random.uniform(1 - JITTER, 1 + JITTER)


class RefusalHold:
    """Refused connections waiting for their 503, oldest first."""

    def __init__(self, delay: float = REFUSAL_DELAY, capacity: int = MAX_HELD) -> None:
        self.delay = delay
        self.capacity = capacity
        self._held: list[tuple[float, int, socket.socket, float]] = []
        """(deadline, arrival, connection, how long it was held): a heap, the next due first."""
        self._arrivals = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self.answered_at_once = 0
        """Refusals answered without a wait because the hold was full, since start."""

    def __len__(self) -> int:
        return len(self._held)

    def refuse(self, conn: socket.socket) -> None:
        """Answer ``conn`` 503 after the delay, stretched by how many are held, or at once if
        the hold is full."""
        if self.delay <= 0 or len(self._held) >= self.capacity:
            if self.delay > 0:
                self.answered_at_once += 1
            refuse_now(conn, self.delay * MAX_STRETCH)
            return
        loop = asyncio.get_running_loop()
        hold = jittered(self.delay * stretch(len(self._held)))
        deadline = loop.time() + hold
        heapq.heappush(self._held, (deadline, next(self._arrivals), conn, hold))
        if self._timer is None or deadline + GRANULARITY < self._timer.when():
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(deadline + GRANULARITY, self._answer_due)

    def _answer_due(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time() + GRANULARITY
        held = self._held
        while held and held[0][0] <= now:
            _, _, conn, hold = heapq.heappop(held)
            refuse_now(conn, hold)
        self._timer = loop.call_at(held[0][0] + GRANULARITY, self._answer_due) if held else None

    def close(self) -> None:
        """Answer every held connection now (the gateway is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._held:
            refuse_now(heapq.heappop(self._held)[2])
