"""Where a call that changes a match goes: this replica, or the owner it is forwarded to."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from ..errors import Moved
from ..hosting import Arena, HostedMatch
from .peers import FORWARD_TIMEOUT, Peers, forwarded
from .requests import authorization_of
from .status import Context


class Router:
    """Finds the writer of a match and forwards calls to it when it is another replica."""

    def __init__(self, arena: Arena, peers: Peers | None) -> None:
        self.arena = arena
        self.peers = peers

    async def writer(self, match_id: str, context: Context) -> HostedMatch | str:
        """The match if this replica writes it, else the owner's address to forward to (never
        for a call that was itself forwarded: ownership moved, so the client retries)."""
        target = await self.arena.writer_of(match_id)
        if isinstance(target, str) and (
            self.peers is None or forwarded(context.invocation_metadata())
        ):
            raise Moved(match_id)
        return target

    async def forward(
        self, address: str, method: str, request: Message, context: Context, *, credential: bool
    ) -> Any:
        """Call ``method`` on the owner at ``address``, with the caller's credential if the
        owner needs it; its answer (or refusal) is the caller's."""
        assert self.peers is not None  # only replicas have owners elsewhere
        return await self.peers.forward(
            address,
            method,
            lambda stub, metadata: getattr(stub, method)(
                request, metadata=metadata, timeout=FORWARD_TIMEOUT
            ),
            authorization_of(context) if credential else None,
        )
