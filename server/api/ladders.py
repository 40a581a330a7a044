"""The LadderService servicer: each RPC checks its request, calls the ladders room and
answers, errors mapped by the same decorators and table as the match service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.message import Message

from cardarena.v1 import ladder_pb2 as lpb

from ..errors import BadRequest, DirectedElsewhere, NotRunning
from ..ladders import Ladders, LadderSpec, SnapshotGone
from ..ladders.info import ladder_info
from ..ladders.playing import playing
from ..ladders.registry import KeptLadders
from ..ladders.spec import VERSION
from ..tournaments.entrants import entrant_of
from .access import Guard
from .peers import FORWARD_TIMEOUT, Peers, forwarded
from .reads import gated
from .requests import authorization_of, bearer_token
from .status import Context, Refused, streaming, unary
from .streams import Streams
from .tournament_requests import MAX_CAPACITY, MAX_MATCH_LINES, shared_settings

MAX_LADDER_PAGE = 100


def ladder_spec(request: lpb.CreateLadderRequest) -> tuple[LadderSpec, list[int]]:
    """The checked settings, and the entrants whose keys the server is to draw."""
    shared = shared_settings(request, "ladder")
    board_names(shared.names)
    prepared, control = shared.prepared, shared.control
    spec = LadderSpec(
        name=request.name,
        game=prepared.game,
        players=prepared.players,
        options=dict(prepared.options),
        entrants=tuple(shared.names),
        key_hashes=tuple(shared.hashes),
        concurrency=shared.concurrency,
        forfeit_after=shared.forfeit_after,
        lowest_wins=shared.lowest_wins,
        move_ms=control.move_ms,
        bank_ms=control.bank_ms,
        increment_ms=control.increment_ms,
        round_ms=control.round_ms,
        creator=shared.creator,
    )
    return spec, shared.drawn


def board_names(names: list[str]) -> None:
    """Refuse an entrant's name with ``@``: the board names an entrant at a version
    ``name@version``, so "alice" at version "v2" would be the entrant "alice@v2", both one
    player on the board and in a lineup (one entrant holding two seats of a match)."""
    for i, name in enumerate(names):
        if "@" in name:
            raise BadRequest(
                f"entrants[{i}].name {name!r} holds '@', which a ladder's board keeps for"
                " name@version"
            )


class LadderService:
    """The handlers of ``cardarena.v1.LadderService``."""

    def __init__(
        self, ladders: Ladders, guard: Guard, streams: Streams, peers: Peers | None = None
    ) -> None:
        self.ladders = ladders
        self.guard = guard
        self.streams = streams
        self.peers = peers
        """The other replicas: a call about a ladder another one directs is answered there."""
        self.refuse_new = streams.refuse_new

    async def _at_director(
        self,
        moved: DirectedElsewhere,
        method: str,
        request: Message,
        context: Context,
        *,
        credential: bool = False,
    ) -> Any:
        """Ask the replica that directs the ladder (its answer or refusal is the caller's);
        a call forwarded already is not forwarded again: UNAVAILABLE, and the client retries
        once the lease has settled."""
        if self.peers is None or forwarded(context.invocation_metadata()):
            raise moved
        return await self.peers.forward_ladder(
            moved.address,
            method,
            lambda stub, metadata: getattr(stub, method)(
                request, metadata=metadata, timeout=FORWARD_TIMEOUT
            ),
            authorization_of(context) if credential else None,
        )

    @unary
    async def CreateLadder(
        self, request: lpb.CreateLadderRequest, context: Context
    ) -> lpb.CreateLadderResponse:
        self.refuse_new()
        self.guard.may_create(context, "CreateLadder")
        spec, drawn = ladder_spec(request)
        director, keys = await self.ladders.create(
            spec,
            request_id=request.request_id or None,
            drawn=drawn,
            operator=self.guard.is_operator(context),
        )
        entrant_keys = [""] * len(spec.entrants)
        for index, key in zip(drawn, keys, strict=True):
            entrant_keys[index] = key
        return lpb.CreateLadderResponse(ladder=ladder_info(director), entrant_keys=entrant_keys)

    @unary
    @gated
    async def GetLadder(
        self, request: lpb.GetLadderRequest, context: Context
    ) -> lpb.GetLadderResponse:
        try:
            info, director = await self.ladders.info(request.ladder_id)
        except DirectedElsewhere as moved:
            answer: lpb.GetLadderResponse = await self._at_director(
                moved, "GetLadder", request, context
            )
            return answer
        response = lpb.GetLadderResponse(ladder=info)
        if request.include_playing and director is not None:
            response.playing.extend(playing(director))
        return response

    @unary
    @gated
    async def ListLadders(
        self, request: lpb.ListLaddersRequest, context: Context
    ) -> lpb.ListLaddersResponse:
        size = request.page_size or MAX_LADDER_PAGE
        if size > MAX_LADDER_PAGE:
            raise BadRequest(f"page_size is at most {MAX_LADDER_PAGE}, got {size}")
        records, token = await self.ladders.list_records(
            page_size=size,
            page_token=request.page_token or None,
            newest_first=request.newest_first,
        )

        async def elsewhere(moved: DirectedElsewhere, ladder_id: str) -> lpb.LadderInfo:
            asked = lpb.GetLadderRequest(ladder_id=ladder_id)
            answer: lpb.GetLadderResponse = await self._at_director(
                moved, "GetLadder", asked, context
            )
            return answer.ladder

        infos = await self.ladders.listed(records, elsewhere)
        return lpb.ListLaddersResponse(ladders=infos, next_page_token=token or "")

    @unary
    @gated
    async def GetLadderSnapshot(
        self, request: lpb.GetLadderSnapshotRequest, context: Context
    ) -> lpb.GetLadderSnapshotResponse:
        limit = request.matches_limit or MAX_MATCH_LINES
        if limit > MAX_MATCH_LINES:
            raise BadRequest(f"matches_limit is at most {MAX_MATCH_LINES}, got {limit}")
        closed = await self.ladders.closed(request.ladder_id)
        try:
            if closed is not None:
                record = closed.record
                made, signature = closed.signed(request.counted)
            else:
                director = await self.ladders.get(request.ladder_id)
                record = director.record
                made, signature = self.ladders.signed(director, request.counted)
        except SnapshotGone as gone:
            raise NotRunning(str(gone)) from None
        except DirectedElsewhere as moved:
            answer: lpb.GetLadderSnapshotResponse = await self._at_director(
                moved, "GetLadderSnapshot", request, context
            )
            return answer
        counted = made.ladder.counted
        if request.matches_from > counted:
            raise BadRequest(
                f"matches_from is past the snapshot: {request.matches_from} of {counted} matches"
            )
        lines = await self.ladders.lines(
            record, made.ladder.players, counted, request.matches_from, limit
        )
        response = lpb.GetLadderSnapshotResponse(snapshot=made, matches=lines)
        if signature is not None:
            response.signature.CopyFrom(signature)
        return response

    @unary
    async def CloseLadder(
        self, request: lpb.CloseLadderRequest, context: Context
    ) -> lpb.CloseLadderResponse:
        self.refuse_new()
        closed = await self.ladders.closed(request.ladder_id)
        if closed is not None:  # closed already, and kept: answered as it closed
            await self.guard.cancelling(
                KeptLadders(closed), request.ladder_id, request.reason, context
            )
            return lpb.CloseLadderResponse(ladder=closed.info)
        try:
            director, reason = await self.guard.cancelling(
                self.ladders, request.ladder_id, request.reason, context
            )
        except DirectedElsewhere as moved:
            answer: lpb.CloseLadderResponse = await self._at_director(
                moved, "CloseLadder", request, context, credential=True
            )
            return answer
        await director.close(reason.replace("cancelled", "closed", 1))
        return lpb.CloseLadderResponse(ladder=ladder_info(director))

    @streaming
    async def EnterLadder(
        self, request: lpb.EnterLadderRequest, context: Context
    ) -> AsyncIterator[lpb.EnterLadderResponse]:
        self.refuse_new()
        key = bearer_token(context)
        closed = await self.ladders.closed(request.ladder_id)
        director = None if closed is not None else await self.ladders.get(request.ladder_id)
        spec = director.spec if director is not None else closed.spec if closed else None
        assert spec is not None
        entrant = entrant_of(spec.key_hashes, key)
        if entrant is None:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED, "the key is not an entrant's of this ladder"
            )
        if request.version and not VERSION.fullmatch(request.version):
            raise BadRequest(
                "version must be 1 to 32 characters of A-Z a-z 0-9 . _ -, got"
                f" {request.version[:40]!r}"
            )
        if request.capacity > MAX_CAPACITY:
            raise BadRequest(f"capacity is at most {MAX_CAPACITY}, got {request.capacity}")
        if closed is not None:
            yield lpb.EnterLadderResponse(closed=closed.info)
            return
        assert director is not None
        if director.closed:
            yield lpb.EnterLadderResponse(closed=ladder_info(director))
            return
        link = director.enter(entrant, request.version, request.capacity or 1)
        try:
            player = director.current[entrant]
            entered = lpb.LadderEntered(player=player, ladder=ladder_info(director))
            yield lpb.EnterLadderResponse(entered=entered)
            while True:
                item = await link.queue.get()
                if item is None:
                    if director.moved:
                        raise Refused(
                            grpc.StatusCode.UNAVAILABLE,
                            "another replica directs this ladder now: enter again (calls are"
                            " told where)",
                        )
                    if link.dropped:
                        raise Refused(
                            grpc.StatusCode.UNAVAILABLE,
                            "the stream fell behind: connect again (running matches are told"
                            " again)",
                        )
                    return
                yield item
        finally:
            director.leave(link)
