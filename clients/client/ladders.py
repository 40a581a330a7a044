"""A ladder hosted by the server (docs/ladders.md): it keeps scheduling duplicate groups among
the entrants connected now and keeps a board of ratings; an entrant connects with its key and
stays (:meth:`LadderCalls.enter`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb

if TYPE_CHECKING:
    from cardarena.v1.ladder_pb2_grpc import LadderServiceAsyncStub

    from .arena import ArenaClient


def _bearer(secret: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {secret}"),)


@dataclass(frozen=True)
class Snapshot:
    """A signed snapshot, whole: the board, every match it counts, the signature."""

    snapshot: lpb.LadderSnapshot
    matches: list[lpb.LadderMatch]
    signature: spb.ResultsSignature | None


class LadderCalls:
    """``client.ladders``: the LadderService over the client's channel."""

    def __init__(self, client: ArenaClient, channel: grpc.aio.Channel) -> None:
        self._client = client
        self.stub: LadderServiceAsyncStub = ladder_pb2_grpc.LadderServiceStub(channel)

    async def create(self, request: lpb.CreateLadderRequest) -> lpb.CreateLadderResponse:
        """Open the ladder ``request`` describes, as the operator when the client has the
        token."""
        client = self._client
        response: lpb.CreateLadderResponse = await client._retrying(
            lambda: self.stub.CreateLadder(
                request, metadata=client._operator, timeout=client.timeout
            )
        )
        return response

    async def get(self, ladder_id: str) -> lpb.LadderInfo:
        request = lpb.GetLadderRequest(ladder_id=ladder_id)
        response: lpb.GetLadderResponse = await self._client._retrying(
            lambda: self.stub.GetLadder(request, timeout=self._client.timeout)
        )
        return response.ladder

    async def snapshot(self, ladder_id: str) -> Snapshot:
        """The latest signed snapshot with every match it counts, read a page at a time."""
        first = await self._page(ladder_id, 0, 0)
        counted = first.snapshot.ladder.counted
        matches = list(first.matches)
        while len(matches) < counted:
            page = await self._page(ladder_id, counted, len(matches))
            if not page.matches:  # the server lists no more: never loop on it
                break
            matches.extend(page.matches)
        signature = first.signature if first.HasField("signature") else None
        return Snapshot(first.snapshot, matches, signature)

    async def _page(
        self, ladder_id: str, counted: int, first: int
    ) -> lpb.GetLadderSnapshotResponse:
        request = lpb.GetLadderSnapshotRequest(
            ladder_id=ladder_id, counted=counted, matches_from=first
        )
        response: lpb.GetLadderSnapshotResponse = await self._client._retrying(
            lambda: self.stub.GetLadderSnapshot(request, timeout=self._client.timeout)
        )
        return response

    async def close(
        self, ladder_id: str, *, reason: str = "", secret: str | None = None
    ) -> lpb.LadderInfo:
        """Close as the operator, or with the ladder's creator ``secret``."""
        client = self._client
        metadata = client._operator if secret is None else _bearer(secret)
        request = lpb.CloseLadderRequest(ladder_id=ladder_id, reason=reason)
        response: lpb.CloseLadderResponse = await client._retrying(
            lambda: self.stub.CloseLadder(request, metadata=metadata, timeout=client.timeout)
        )
        return response.ladder

    def enter(
        self, ladder_id: str, key: str, *, version: str = "", capacity: int = 1
    ) -> grpc.aio.UnaryStreamCall[lpb.EnterLadderRequest, lpb.EnterLadderResponse]:
        """An entrant's stream: ``entered`` first, then a ``match`` per seat it is given, and
        ``closed`` when the ladder closes. ``version``: its bot's (a new one starts afresh
        on the board); ``capacity``: the most matches it plays at once."""
        request = lpb.EnterLadderRequest(ladder_id=ladder_id, version=version, capacity=capacity)
        return self.stub.EnterLadder(request, metadata=_bearer(key))
