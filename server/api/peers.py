"""Channels to the other replicas: how an action reaching a non-owner gets to the owner.

Forwarding is a plain gRPC call of the same method on the owner, carrying the caller's token,
a marker naming the forwarding replica and the replicas' shared secret (kept in their shared
database, so only a replica can present it: a client that copies the marker is no replica, and
is limited like any other). A forwarded call is never forwarded again: if
ownership moved meanwhile the owner answers UNAVAILABLE and the client retries, which lands on
the new owner (or is forwarded to it) with the same request id, so nothing is applied twice.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from cardarena.v1 import ladder_pb2_grpc, service_pb2_grpc

from .. import metrics

if TYPE_CHECKING:
    from cardarena.v1.ladder_pb2_grpc import LadderServiceAsyncStub
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

__all__ = ["FORWARDED_BY", "FORWARD_TIMEOUT", "PEER_SECRET", "OwnerUnreachable", "Peers"]

T = TypeVar("T")

FORWARDED_BY = "x-cardarena-forwarded-by"
PEER_SECRET = "x-cardarena-peer-secret"
FORWARD_TIMEOUT = 10.0
MAX_PEERS = 64
"""Channels kept open; the least recently used beyond this are closed."""
_GONE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


class OwnerUnreachable(Exception):
    """The owner did not answer; its lease will run out and another replica take over."""


class Peers:
    """One lazily opened channel per peer address, for the life of the server."""

    def __init__(self, replica: str) -> None:
        self.replica = replica
        self.secret = ""
        """The replicas' shared secret (hex), from the store once it is open; empty: none yet,
        and no call is taken for a replica's."""
        self._channels: dict[str, tuple[grpc.aio.Channel, MatchServiceAsyncStub]] = {}
        self._closing: set[asyncio.Future[None]] = set()

    def stub(self, address: str) -> MatchServiceAsyncStub:
        known = self._channels.pop(address, None)
        if known is None:
            channel = grpc.aio.insecure_channel(address)
            known = (channel, service_pb2_grpc.MatchServiceStub(channel))
            if len(self._channels) >= MAX_PEERS:  # replicas come and go with new addresses
                oldest = next(iter(self._channels))
                stale, _ = self._channels.pop(oldest)
                self._closing.add(asyncio.ensure_future(stale.close(grace=FORWARD_TIMEOUT)))
                self._closing = {task for task in self._closing if not task.done()}
        self._channels[address] = known  # the most recently used last
        return known[1]

    async def forward(
        self,
        address: str,
        method: str,
        call: Callable[[MatchServiceAsyncStub, tuple[tuple[str, str], ...]], Awaitable[T]],
        authorization: str | None,
    ) -> T:
        """Run ``call(stub, metadata)`` on the owner at ``address``. Its refusals come back as
        ``grpc.aio.AioRpcError`` to pass on; silence becomes :class:`OwnerUnreachable`."""
        metadata: tuple[tuple[str, str], ...] = (
            (FORWARDED_BY, self.replica),
            (PEER_SECRET, self.secret),
        )
        if authorization is not None:
            metadata += (("authorization", authorization),)
        metrics.FORWARDED.labels(method).inc()
        try:
            return await call(self.stub(address), metadata)
        except grpc.aio.AioRpcError as error:
            if error.code() in _GONE:
                raise OwnerUnreachable(
                    "the replica that owns this match did not answer: retry shortly"
                ) from None
            raise

    async def forward_ladder(
        self,
        address: str,
        method: str,
        call: Callable[[LadderServiceAsyncStub, tuple[tuple[str, str], ...]], Awaitable[T]],
        authorization: str | None,
    ) -> T:
        """As :meth:`forward`, a LadderService call, to the replica that directs the ladder."""
        self.stub(address)  # the channel, opened or moved to the most recently used
        ladders = ladder_pb2_grpc.LadderServiceStub(self._channels[address][0])
        return await self.forward(
            address, method, lambda _stub, metadata: call(ladders, metadata), authorization
        )

    async def close(self) -> None:
        channels, self._channels = self._channels, {}
        await asyncio.gather(*(channel.close() for channel, _ in channels.values()), *self._closing)

    def vouched(self, metadata: Any) -> bool:
        """Whether a call comes from another replica: it carries the shared secret."""
        offered = next((v for k, v in metadata or () if k == PEER_SECRET), None)
        return (
            bool(self.secret)
            and isinstance(offered, str)
            and hmac.compare_digest(offered.encode(), self.secret.encode())
        )


def forwarded(metadata: Any) -> bool:
    """Whether a call's invocation metadata marks it as forwarded by a replica."""
    return any(key == FORWARDED_BY for key, _ in metadata or ())
