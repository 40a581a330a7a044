"""Per-address limits: token buckets, bounded in the number of peers they remember, and
which address a call counts against."""

from __future__ import annotations

import hmac
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

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


WEB_CLIENT = "cardarena-web-client"
"""The metadata the gRPC-Web gateway puts on every call it forwards: its secret, a space, the
browser's address. Without it every browser would share the gateway's own address."""


class ClientHosts:
    """Which address a call's per-address limits count against: its peer's host, or, for a
    call the gateway vouches for with its secret (compared in constant time), the browser's.
    ``gateway_secret`` ``None``: no gateway, so no call is vouched for."""

    def __init__(self, gateway_secret: str | None = None) -> None:
        self.gateway_secret = gateway_secret

    def of(self, context: Any) -> str:
        if self.gateway_secret is not None:
            for key, value in context.invocation_metadata() or ():
                if key == WEB_CLIENT and isinstance(value, str):
                    secret, _, browser = value.partition(" ")
                    if browser and hmac.compare_digest(
                        secret.encode(), self.gateway_secret.encode()
                    ):
                        return "web:" + browser
                    break
        return peer_host(context.peer() or "")
