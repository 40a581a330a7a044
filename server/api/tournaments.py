"""The TournamentService servicer: each RPC checks its request, calls the tournaments room and
answers, errors mapped by the same decorators and table as the match service."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from cardarena.v1 import tournament_pb2 as tpb

from ..errors import BadRequest
from ..hosting import CONTRIBUTION_BYTES
from ..hosting.subscribers import message_field
from ..tournaments import Tournaments, tournament_info
from ..tournaments.entrants import entrant_of
from .access import Guard
from .info import page_bytes
from .reads import gated
from .requests import bearer_token
from .status import Context, Refused, streaming, unary
from .streams import Streams
from .tournament_requests import MAX_CAPACITY, match_page, tournament_spec

TOURNAMENT = tpb.GetTournamentResponse.DESCRIPTOR.fields_by_name["tournament"].number
LISTED = tpb.ListTournamentsResponse.DESCRIPTOR.fields_by_name["tournaments"].number

MAX_TOURNAMENT_PAGE = 100
"""Tournaments per ListTournaments page: an ended one never listed before is read back with
every match once, so a page may cost far more than a page of matches."""


class TournamentService:
    """The handlers of ``cardarena.v1.TournamentService``."""

    def __init__(self, tournaments: Tournaments, guard: Guard, streams: Streams) -> None:
        self.tournaments = tournaments
        self.guard = guard
        self.streams = streams
        self.refuse_new = streams.refuse_new

    @unary
    async def CreateTournament(
        self, request: tpb.CreateTournamentRequest, context: Context
    ) -> tpb.CreateTournamentResponse:
        self.refuse_new()
        self.guard.may_create(context, "CreateTournament")
        spec, drawn = tournament_spec(request)
        director, keys = await self.tournaments.create(
            spec,
            seed=request.seed or None,
            request_id=request.request_id or None,
            drawn=drawn,
            operator=self.guard.is_operator(context),
        )
        entrant_keys = [""] * len(spec.entrants)
        for index, key in zip(drawn, keys, strict=True):
            entrant_keys[index] = key
        return tpb.CreateTournamentResponse(
            tournament=tournament_info(director), entrant_keys=entrant_keys
        )

    @unary
    @gated
    async def GetTournament(
        self, request: tpb.GetTournamentRequest, context: Context
    ) -> tpb.GetTournamentResponse | bytes:
        info = await self.tournaments.published(
            request.tournament_id,
            lambda planned: match_page(request, planned),
            operator=self.guard.is_operator(context),
        )
        if isinstance(info, bytes):  # final: kept, sent as it is
            return message_field(TOURNAMENT, info)
        return tpb.GetTournamentResponse(tournament=info)

    @unary
    @gated
    async def ListTournaments(self, request: tpb.ListTournamentsRequest, context: Context) -> bytes:
        size = request.page_size or MAX_TOURNAMENT_PAGE
        if size > MAX_TOURNAMENT_PAGE:
            raise BadRequest(f"page_size is at most {MAX_TOURNAMENT_PAGE}, got {size}")
        records, token = await self.tournaments.list_records(
            page_size=size, page_token=request.page_token or None
        )
        fields = [message_field(LISTED, info) for info in await self.tournaments.listed(records)]
        return page_bytes(tpb.ListTournamentsResponse, fields, token or "")

    @unary
    async def CancelTournament(
        self, request: tpb.CancelTournamentRequest, context: Context
    ) -> tpb.CancelTournamentResponse:
        self.refuse_new()
        director, reason = await self.guard.cancelling(
            self.tournaments, request.tournament_id, request.reason, context
        )
        await director.cancel(reason)
        return tpb.CancelTournamentResponse(tournament=tournament_info(director))

    @streaming
    async def WatchTournament(
        self, request: tpb.WatchTournamentRequest, context: Context
    ) -> AsyncIterator[tpb.WatchTournamentResponse]:
        """Conflated: a watcher that reads slowly sees the latest state, not every one."""
        self.refuse_new()
        director = await self.tournaments.get(request.tournament_id)
        async with self.streams.spectating(context):
            while True:
                version, ended = director.version, director.ended
                yield tpb.WatchTournamentResponse(tournament=tournament_info(director))
                if ended:
                    return
                await director.changed_since(version)

    @streaming
    async def Enter(
        self, request: tpb.EnterRequest, context: Context
    ) -> AsyncIterator[tpb.EnterResponse]:
        self.refuse_new()
        key = bearer_token(context)
        director = await self.tournaments.get(request.tournament_id)
        entrant = entrant_of(director.spec.key_hashes, key)
        if entrant is None:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED, "the key is not an entrant's of this tournament"
            )
        if request.contribution and len(request.contribution) != CONTRIBUTION_BYTES:
            raise BadRequest(
                f"contribution is exactly {CONTRIBUTION_BYTES} bytes, got"
                f" {len(request.contribution)}"
            )
        if request.capacity > MAX_CAPACITY:
            raise BadRequest(f"capacity is at most {MAX_CAPACITY}, got {request.capacity}")
        await director.offer(entrant, request.contribution or None)
        director.set_capacity(entrant, request.capacity)
        entered = tpb.Entered(
            entrant=director.spec.entrants[entrant], tournament=tournament_info(director)
        )
        if director.ended:
            yield tpb.EnterResponse(entered=entered)
            yield tpb.EnterResponse(ended=tournament_info(director))
            return
        link = director.connect(entrant)
        try:
            yield tpb.EnterResponse(entered=entered)
            while True:
                item = await link.queue.get()
                if item is None:
                    if link.dropped:
                        raise Refused(
                            grpc.StatusCode.UNAVAILABLE,
                            "the stream fell behind: connect again (running matches are"
                            " told again)",
                        )
                    return
                yield item
        finally:
            director.disconnect(link)
