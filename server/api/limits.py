"""Per-address limits: token buckets, bounded in the number of peers they remember, and
which address a call counts against."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import random
import time
import urllib.parse
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

MAX_PEERS = 10_000
"""Buckets kept at most (least recently used forgotten first): the limiter itself must not
be a way to fill the server's memory with made-up peers."""


FAIR_FLOOR = 4
"""What any address may hold of a shared budget however many others hold some: a newcomer is
never shut out by addresses that came first."""


def fair_share(per_address: int, total: int, used: int, others: int) -> int:
    """How much of a server-wide budget of ``total`` (``used`` taken) one address may hold
    while ``others`` addresses hold some: at most ``per_address``, and its share, which leaves
    room for one address more than hold places now; once half the budget is taken, no more
    than :data:`FAIR_FLOOR`, so that the other half always has places for newcomers."""
    share = total // (others + 2) if used < total // 2 else 0
    return min(per_address, max(FAIR_FLOOR, share))


class RefusalPauses:
    """Where a spectator refused for want of places hears so only after a pause.

    A spectator turned away almost always asks again, and a crowd of them (a flood, or a
    popular match's audience reloading) asks again together: each ask is a whole gRPC call
    set up and torn down on the event loop the players wait for, and asks that arrive in
    waves hold it for tens of milliseconds each. A refusal said after a pause of
    :data:`PAUSE_SECONDS` (random within it, so that the crowd's next asks spread out) costs a
    legitimate spectator nothing (there was no place for it), and a caller that waits for
    its answer can ask at most once a pause. The pauses are bounded like any held call: at
    most ``per_address`` of an address and ``total`` of the server at once; beyond that the
    refusal comes at once."""

    def __init__(
        self,
        seconds: tuple[float, float] | None = None,
        per_address: int = 16,
        total: int = 1024,
    ) -> None:
        self.seconds = PAUSE_SECONDS if seconds is None else seconds
        self.per_address = per_address
        self.total = total
        self.held = 0
        """Pauses held now, every address's together."""
        self._held: Counter[str] = Counter()

    async def pause(self, address: str) -> None:
        """Wait before a refusal to ``address`` (at once when its or the server's pauses are
        all taken)."""
        if self._held[address] >= self.per_address or self.held >= self.total:
            return
        self._held[address] += 1
        self.held += 1
        try:
            await asyncio.sleep(random.uniform(*self.seconds))
        finally:
            self.held -= 1
            self._held[address] -= 1
            if not self._held[address]:
                del self._held[address]


PAUSE_SECONDS = (1.0, 3.0)
"""How long a refused spectator waits for its answer, drawn uniformly."""


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


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def ip_address(text: str) -> Address | None:
    """``text`` as an IP address (an IPv4-mapped IPv6 one as its IPv4), or ``None``; with a
    port, as some proxies write their hops (``203.0.113.5:4711``, ``[2001:db8::1]:80``), the
    address without it."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped or address


IPV6_PREFIX = 64
"""An IPv6 client counts as its /64: one subscriber's network holds 2^64 addresses, and
counting each apart would give one host as many buckets and stream places as it liked."""


def counted_text(address: Address) -> str:
    """What a client at ``address`` counts as: the address (IPv4), or its /64 (IPv6)."""
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    return str(ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False))


def grpc_host(address: Address) -> str:
    """What ``address`` counts as, written as :func:`peer_host` shows a gRPC peer's
    (``ipv4:10.0.0.1``, ``ipv6:%5B2001:db8::/64%5D``), so that a client counts the same
    directly and through a proxy."""
    if isinstance(address, ipaddress.IPv4Address):
        return f"ipv4:{address}"
    return f"ipv6:%5B{counted_text(address)}%5D"


def host_address(host: str) -> Address | None:
    """The IP address of a :func:`peer_host` (``None`` for a Unix socket or anything else)."""
    scheme, sep, rest = host.partition(":")
    if not sep or scheme not in ("ipv4", "ipv6"):
        return None
    return ip_address(urllib.parse.unquote(rest))


@dataclass(frozen=True)
class TrustedProxies:
    """The proxies in front of the server (or of its gateway) whose ``X-Forwarded-For`` says
    who the client is. Behind a load balancer or ingress every client would otherwise share
    its address, and so one address's rate limits and stream caps; trusting anyone else's
    header would let a client choose the address it is counted as."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """``"10.0.0.0/8,127.0.0.1"``: networks or addresses, comma-separated; ``""``: none.
        ``ValueError`` names the part that is not one."""
        networks: list[Network] = []
        for part in filter(None, (p.strip() for p in text.split(","))):
            try:
                networks.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise ValueError(f"expected an IP address or network, got {part!r}") from None
        return cls(tuple(networks))

    def trusts(self, address: Address) -> bool:
        return any(address in network for network in self.networks)

    def client(self, peer: Address, forwarded: str | None) -> Address:
        """Who is behind ``peer``: ``peer`` itself unless it is trusted and forwarded for
        someone; then, reading ``X-Forwarded-For`` from the right (each proxy appends the
        address it was reached from), the first address that is no trusted proxy. A hop that
        is no address ends the walk: nothing to the left of it can be believed."""
        client = peer
        if not forwarded or not self.trusts(peer):
            return client
        for hop in reversed(forwarded.split(",")):
            address = ip_address(hop)
            if address is None:
                break
            client = address
            if not self.trusts(address):
                break
        return client


FORWARDED_FOR = "x-forwarded-for"
"""The header (gRPC metadata) a trusted proxy names the client in."""

WEB_CLIENT = "cardarena-web-client"
"""The metadata the gRPC-Web gateway puts on every call it forwards: its secret, a space, the
browser's address. Without it every browser would share the gateway's own address."""


class ClientHosts:
    """Which address a call's per-address limits count against: its peer's host; for a call
    the gateway vouches for with its secret (compared in constant time), the browser's; for a
    call from a trusted proxy (:class:`TrustedProxies`), the client its ``X-Forwarded-For``
    names. ``gateway_secret`` ``None``: no gateway, so no call is vouched for."""

    def __init__(
        self, gateway_secret: str | None = None, proxies: TrustedProxies | None = None
    ) -> None:
        self.gateway_secret = gateway_secret
        self.proxies = proxies or TrustedProxies()

    def of(self, context: Any) -> str:
        metadata = context.invocation_metadata() or ()
        if self.gateway_secret is not None:
            for key, value in metadata:
                if key == WEB_CLIENT and isinstance(value, str):
                    secret, _, browser = value.partition(" ")
                    if browser and hmac.compare_digest(
                        secret.encode(), self.gateway_secret.encode()
                    ):
                        address = ip_address(browser)
                        return "web:" + (browser if address is None else counted_text(address))
                    break
        host = peer_host(context.peer() or "")
        peer = host_address(host)
        if peer is None:
            return host  # a Unix socket: as it is
        if self.proxies.trusts(peer):
            forwarded = ", ".join(
                value for key, value in metadata if key == FORWARDED_FOR and isinstance(value, str)
            )
            peer = self.proxies.client(peer, forwarded)
        return grpc_host(peer)
