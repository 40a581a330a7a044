"""Per-peer rate limits: token buckets, bounded in the number of peers they remember."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

MAX_PEERS = 10_000
"""Buckets kept at most (least recently used forgotten first): the limiter itself must not
be a way to fill the server's memory with made-up peers."""


@dataclass(frozen=True)
class Rate:
    """``per_second`` calls on average, ``burst`` at once; ``per_second == 0``: no limit."""

    per_second: float
    burst: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"50/s"`` or ``"50/s,500"`` (burst), or ``"0"`` for no limit. ``ValueError``
        names what is wrong."""
        if text.strip() == "0":
            return cls(0.0, 0)
        rate, _, burst = text.partition(",")
        number, sep, unit = rate.partition("/")
        if not sep or unit.strip() != "s":
            raise ValueError(f"a rate is CALLS/s[,BURST] or 0, got {text!r}")
        per_second = float(number)
        if not 0 < per_second <= 1e6:
            raise ValueError(f"calls per second are 0 < n <= 1e6, got {number!r}")
        size = int(burst) if burst else max(1, int(per_second * 10))
        if size < 1:
            raise ValueError(f"a burst is at least 1, got {burst!r}")
        return cls(per_second, size)


class RateLimiter:
    """One token bucket per peer."""

    def __init__(self, rate: Rate) -> None:
        self.rate = rate
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def wait_for(self, peer: str) -> float:
        """Take one call's token for ``peer``: 0.0 if it may go on, else the seconds until it
        may retry (nothing is taken then)."""
        if self.rate.per_second <= 0:
            return 0.0
        now = time.monotonic()
        tokens, then = self._buckets.pop(peer, (float(self.rate.burst), now))
        tokens = min(float(self.rate.burst), tokens + (now - then) * self.rate.per_second)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate.per_second
        self._buckets[peer] = (tokens, now)
        while len(self._buckets) > MAX_PEERS:
            self._buckets.popitem(last=False)
        return wait


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer string (``ipv4:127.0.0.1:5000`` -> ``ipv4:127.0.0.1``):
    limits apply to a host, not to each of its connections."""
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() else peer
