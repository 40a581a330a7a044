"""How the clients reach a server: one gRPC target for one address or several replicas.

Shared by the client library and by everything that fetches a log, so that every command
accepts the same ``--server`` forms and every channel has the same keepalive and balancing.
"""

from __future__ import annotations

import re

import grpc

RETRYABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # Several replicas (or a DNS name of several): spread calls, skip the unreachable.
    ("grpc.lb_policy_name", "round_robin"),
]
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


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
