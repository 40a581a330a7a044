"""How the clients reach a server: one gRPC target for one address or several replicas.

Shared by the client library and by everything that fetches a log, so that every command
accepts the same ``--server`` forms and every channel has the same keepalive and balancing.
"""

from __future__ import annotations

import ipaddress
import re

import grpc

from .cancelling import wait_within

RETRYABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)
RETRY_AFTER = "cardarena-retry-after-ms"
"""The trailer a RESOURCE_EXHAUSTED refusal names its retry delay in (a rate, or the server's
gate for anonymous reads): a call refused so may be made again once it has passed."""
MAX_RETRY_AFTER_S = 5.0


def retry_after(error: grpc.aio.AioRpcError) -> float | None:
    """Seconds to wait before the refused call may be made again, where the server said so
    (RESOURCE_EXHAUSTED with :data:`RETRY_AFTER`); ``None`` for any other refusal."""
    if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for key, value in error.trailing_metadata() or ():
        if key == RETRY_AFTER and isinstance(value, str) and value.isdigit():
            return min(MAX_RETRY_AFTER_S, int(value) / 1000)
    return None


CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # Several replicas (or a DNS name of several): spread calls, skip the unreachable.
    ("grpc.lb_policy_name", "round_robin"),
]
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")
_HOST = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
_SCHEME = re.compile(r"^(dns|ipv4|ipv6|unix|unix-abstract|vsock):")
CONNECT_WITHIN_S = 3.0
"""How long a command waits for a server to answer before it says none does: a server that
is starting answers within it, and a dead address is named within a few seconds."""


class Unreachable(Exception):
    """No server answered at an address in the time given (the message names the address)."""


def channel_target(address: str) -> str:
    """The gRPC target for ``address``: one ``HOST:PORT`` (or any gRPC target such as
    ``dns:///replicas:50051``), or several comma-separated IPv4 ``HOST:PORT``s of replicas,
    among which calls are spread round robin (a dead one is skipped)."""
    parts = [part.strip() for part in address.split(",") if part.strip()]
    if len(parts) <= 1:
        return address.strip()
    for part in parts:
        host, _, port = part.rpartition(":")
        if not (_IPV4.match(host) and port.isdigit()):
            raise ValueError(
                f"several servers are given as IPv4 HOST:PORT, comma-separated; got {part!r}"
                " (for names, use one DNS target that resolves to every replica)"
            )
    return "ipv4:" + ",".join(parts)


def check_address(text: str) -> str:
    """``text`` if it is an address :func:`channel_target` can dial as meant, else
    ``ValueError`` naming what is wrong: ``HOST:PORT`` with a port of 1..65535 (gRPC would
    otherwise dial 443 for a missing port, and another port for 99999), an IPv6 host in
    brackets (``[::1]:50051``), several replicas' IPv4 ``HOST:PORT``s comma-separated, or a
    gRPC target with its scheme (``dns:///name:50051``, ``ipv4:``, ``ipv6:``, ``unix:``)."""
    address = text.strip()
    if not address:
        raise ValueError("expected HOST:PORT, got nothing")
    scheme = _SCHEME.match(address)
    if scheme is not None:
        _check_target(scheme.group(1), address[scheme.end() :], text)
        return text
    parts = [part.strip() for part in address.split(",") if part.strip()]
    channel_target(address)  # several replicas: IPv4 HOST:PORTs, said in its own words
    for part in parts:
        _host_port(part)
    return text


def _check_target(scheme: str, rest: str, text: str) -> None:
    if scheme in ("unix", "unix-abstract", "vsock"):
        if not rest.strip("/"):
            raise ValueError(f"expected a socket after {scheme}:, got {text!r}")
        return
    if scheme == "dns":  # dns:[//AUTHORITY/]HOST:PORT
        _host_port(rest.split("/", 3)[-1] if rest.startswith("//") else rest)
        return
    for part in rest.split(","):  # ipv4:ADDR:PORT,… and ipv6:[ADDR]:PORT,…
        host, _ = _host_port(part)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(f"{scheme}: takes {scheme} addresses, got {part!r}") from None


def _host_port(text: str) -> tuple[str, int]:
    """One ``HOST:PORT`` (``[IPv6]:PORT``) as host and port, or ``ValueError``."""
    if text.startswith("["):
        inside, bracket, port = text[1:].partition("]")
        if not bracket or not port.startswith(":"):
            raise ValueError(f"expected [IPv6]:PORT, got {text!r}")
        try:
            ipaddress.IPv6Address(inside)
        except ValueError:
            raise ValueError(f"{inside!r} is no IPv6 address (in {text!r})") from None
        return inside, _port(port[1:], text)
    host, colon, port = text.rpartition(":")
    if not colon:
        raise ValueError(f"expected HOST:PORT, got {text!r}: no port")
    if ":" in host:
        raise ValueError(f"an IPv6 address goes in brackets, [ADDRESS]:PORT, got {text!r}")
    if not _HOST.match(host):
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return host, _port(port, text)


def _port(port: str, text: str) -> int:
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        raise ValueError(f"a port is 1..65535, got {port!r} in {text!r}")
    return int(port)


async def wait_connected(channel: grpc.aio.Channel, address: str, within: float) -> None:
    """Wait until ``channel`` is connected to a server at ``address``, trying again with
    gRPC's exponential back-off, for at most ``within`` seconds; else :class:`Unreachable`.
    Not ``asyncio.wait_for``: were its cancellation of the wait lost in gRPC's connecting, it
    would wait for a server that is not there for ever."""
    try:
        await wait_within(channel.channel_ready(), within)
    except TimeoutError:
        raise Unreachable(f"no server answers at {address} (tried for {within:g} s)") from None
