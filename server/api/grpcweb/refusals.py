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

An address refused again while many of its connections are held is held longer
(:func:`stretch`): up to :data:`MAX_STRETCH` times the delay. A browser refused now and then
(its six connections at most) waits about the delay; a flooder holding hundreds of
connections in the hold does not come back faster for holding more. The number held is what
the flood has open, however long each is held, so the longer hold costs no more file
descriptors and cuts the rate of accepts, 503s and reconnections it drives in proportion:
the idle flood's 40 addresses, about 20 connections each in the hold, are held about three
seconds each.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import random
import resource
import socket
from collections import Counter
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
HELD_STEP: Final = 8
"""Each this many connections of an address already held stretch its next hold by one delay."""
MAX_STRETCH: Final = 4.0
"""At most this many times the delay is a connection held."""

BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nAccess-Control-Allow-Origin: *\r\n"
    b"Retry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
)
"""Written straight to a connection refused admission, which is never read."""


def refuse_now(conn: socket.socket) -> None:
    """Answer 503 and close ``conn`` (a write that fails, the client gone, is no matter)."""
    with contextlib.suppress(OSError):
        conn.setblocking(False)
        conn.send(BUSY)
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
    """How many delays a refused connection is held when ``held`` of its address's are:
    about one for a browser's handful, growing with a flood's, at most :data:`MAX_STRETCH`."""
    return min(MAX_STRETCH, 1.0 + held / HELD_STEP)


def jittered(delay: float) -> float:
    """``delay`` give or take :data:`JITTER` of it (not a secret: any source will do)."""
    return delay * random.uniform(1 - JITTER, 1 + JITTER)


class RefusalHold:
    """Refused connections waiting for their 503, oldest first."""

    def __init__(self, delay: float = REFUSAL_DELAY, capacity: int = MAX_HELD) -> None:
        self.delay = delay
        self.capacity = capacity
        self._held: list[tuple[float, int, socket.socket, str]] = []
        """(deadline, arrival, connection, its address): a heap, the next due first."""
        self._by_host: Counter[str] = Counter()
        """How many connections of each address are held."""
        self._arrivals = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self.answered_at_once = 0
        """Refusals answered without a wait because the hold was full, since start."""

    def __len__(self) -> int:
        return len(self._held)

    def held_from(self, host: str) -> int:
        """How many of ``host``'s connections are held."""
        return self._by_host[host]

    def refuse(self, conn: socket.socket, host: str = "") -> None:
        """Answer ``conn`` (from the address ``host``) 503 after the delay, stretched by how
        many of its address's are held, or at once if the hold is full."""
        if self.delay <= 0 or len(self._held) >= self.capacity:
            if self.delay > 0:
                self.answered_at_once += 1
            refuse_now(conn)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + jittered(self.delay * stretch(self._by_host[host]))
        heapq.heappush(self._held, (deadline, next(self._arrivals), conn, host))
        self._by_host[host] += 1
        if self._timer is None or deadline + GRANULARITY < self._timer.when():
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(deadline + GRANULARITY, self._answer_due)

    def _answer_due(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time() + GRANULARITY
        held = self._held
        while held and held[0][0] <= now:
            self._answer(heapq.heappop(held))
        self._timer = loop.call_at(held[0][0] + GRANULARITY, self._answer_due) if held else None

    def close(self) -> None:
        """Answer every held connection now (the gateway is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._held:
            self._answer(heapq.heappop(self._held))

    def _answer(self, entry: tuple[float, int, socket.socket, str]) -> None:
        _, _, conn, host = entry
        refuse_now(conn)
        self._by_host[host] -= 1
        if not self._by_host[host]:
            del self._by_host[host]
