"""The MatchService servicer: each RPC checks its request, calls the hosting layer and
answers; whatever goes wrong is mapped through the one table (:mod:`.status`) by the
``unary``/``streaming`` decorators, the one place a call is aborted."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import AsyncIterator
from typing import NoReturn

import grpc

from cardarena.engine import GAMES, get_game
from cardarena.engine.options import default_of
from cardarena.engine.schedule import GameSpec
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import TimeControl

from .. import metrics
from ..errors import BadRequest, NotRunning
from ..hosting import (
    Arena,
    HostedMatch,
    PbProjector,
    Submitted,
    project_for,
    to_completion,
)
from ..hosting.arena import match_id_for
from ..house import HouseBots
from .access import Access, Guard
from .anonymous import AnonymousMatches
from .embargo import Embargo, GroupOf
from .info import (
    STATUS_OF,
    listed_field,
    listed_infos,
    match_info,
    page_bytes,
    settled_info,
)
from .kept import ENDED_LOG_BYTES, LISTED_BYTES, KeptBytes
from .limits import ClientHosts
from .peers import Peers
from .play import PlayCall
from .reads import gated
from .requests import (
    MAX_NAME,
    MAX_PAGE,
    authorize,
    check_contribution,
    check_request_id,
    check_seat,
    check_secret,
    check_text,
    credential,
    parsed,
    reservations,
)
from .routing import Router
from .status import Context, Refused, abort, streaming, unary
from .streams import WATCH_STREAMS, Response, Streams, response
from .wire import Undecodable

DRAINING = "the server is draining: reconnect and resume from your last seq"


class MatchService:
    """The handlers of ``cardarena.v1.MatchService`` (registered by ``wire.add_service``)."""

    def __init__(
        self,
        arena: Arena,
        peers: Peers | None = None,
        access: Access | None = None,
        *,
        hosts: ClientHosts | None = None,
        watch_streams: int = WATCH_STREAMS,
        groups: GroupOf | None = None,
        house: HouseBots | None = None,
    ) -> None:
        self.arena = arena
        self.house = house or HouseBots(arena)
        """The seats the server plays itself (``serve --house-bots``; none by default)."""
        access = access or Access()
        self.guard = Guard(access, peers, hosts)
        self.embargo = Embargo(self.guard, groups)
        """Who may read a match of a duplicate group still being played (``groups``: where
        its group stands, for the refusal's words)."""
        self.router = Router(arena, peers)
        self.streams = Streams(self._refuse_new, self.guard.hosts, watch_streams)
        self.ended_logs = KeptBytes(ENDED_LOG_BYTES)
        """GetMatchLog's answers for ended matches, as sent (:mod:`.kept`)."""
        self.final_infos = KeptBytes(LISTED_BYTES)
        """ListMatches' lines of final matches, as sent (:mod:`.kept`)."""
        self.anonymous = AnonymousMatches(self._unended, *access.anonymous_matches)
        """The matches anonymous creators hold until each ends, per address."""
        self.draining = False

    def _unended(self, match_id: str) -> bool:
        hosted = self.arena.matches.get(match_id)
        return hosted is not None and not hosted.ended

    def _refuse_new(self) -> None:
        """New writes and streams are refused while the server drains (reads still work)."""
        if self.draining:
            raise Refused(grpc.StatusCode.UNAVAILABLE, DRAINING)

    async def refuse_undecodable(self, request: Undecodable, context: Context) -> NoReturn:
        self.guard.throttles.warn(context, "undecodable_request", type=request.type_name)
        await abort(context, Refused(grpc.StatusCode.INVALID_ARGUMENT, request.message))

    # -- reading -------------------------------------------------------------------------

    @unary
    async def ListGames(self, request: spb.ListGamesRequest, context: Context) -> bytes:
        return listed_games(self.house.offer())

    @unary
    @gated
    async def GetMatch(
        self, request: spb.GetMatchRequest, context: Context
    ) -> spb.GetMatchResponse:
        hosted = await self.arena.get(request.match_id)
        await self.embargo.check(hosted, context)
        info = self.embargo.listed(hosted, await settled_info(hosted), context)
        return spb.GetMatchResponse(match=info)

    @unary
    @gated
    async def ListMatches(
        self, request: spb.ListMatchesRequest, context: Context
    ) -> spb.ListMatchesResponse | bytes:
        size = request.page_size or 100
        if size > MAX_PAGE:
            raise BadRequest(f"page_size is at most {MAX_PAGE}, got {size}")
        status = {v: k for k, v in STATUS_OF.items()}.get(request.status)
        store_status = {"waiting": "running"}.get(status or "", status)
        check_text("game", request.game, MAX_NAME)
        game = get_game(request.game).name if request.game else None  # unknown: OptionError
        records, token = await self.arena.list_records(
            status=store_status,
            game=game,
            page_size=size,
            page_token=request.page_token or None,
            newest_first=request.newest_first,
        )
        wanted = STATUS_OF[status] if status in ("waiting", "running") else None
        infos = []
        for item in await listed_infos(self.arena, records, self.final_infos):
            if isinstance(item, bytes):  # final: ended, the same for every reader
                if wanted is None:
                    infos.append(item)
            elif wanted is None or item.info.status == wanted:
                infos.append(listed_field(self.embargo.listed(item.hosted, item.info, context)))
        return page_bytes(spb.ListMatchesResponse, infos, token or "")

    @unary
    @gated
    async def GetMatchLog(
        self, request: spb.GetMatchLogRequest, context: Context
    ) -> spb.GetMatchLogResponse | bytes:
        kept = self.ended_logs.get(request.match_id)
        if kept is not None:  # final: ended, released by its group, signed
            return kept
        hosted = await self.arena.get(request.match_id)
        if hosted.held_back:  # for everyone: its log is final once its group's seed is in it
            raise await self.embargo.refusal(hosted)
        if not hosted.ended:
            raise NotRunning("the full log and the seed are public once the match has ended")
        stored = await hosted.read_log()
        entries = [spb.LogEntry(seq=s.seq, event=s.payload, hash=s.hash) for s in stored]
        checkpoint = await self.arena.log_checkpoint(hosted.match_id)
        response = spb.GetMatchLogResponse(
            match=match_info(hosted),
            entries=entries,
            seed=hosted.record.seed,
            checkpoint=checkpoint,
        )
        if checkpoint is None:
            return response
        data = response.SerializeToString()
        self.ended_logs.keep(hosted.match_id, data)
        return data

    @unary
    async def GetPublicKeys(
        self, request: spb.GetPublicKeysRequest, context: Context
    ) -> spb.GetPublicKeysResponse:
        return spb.GetPublicKeysResponse(keys=await self.arena.public_keys())

    # -- changing ------------------------------------------------------------------------

    @unary
    async def CreateMatch(
        self, request: spb.CreateMatchRequest, context: Context
    ) -> spb.CreateMatchResponse:
        self._refuse_new()
        self.guard.may_create(context)
        creator = None if self.guard.proven(context) else self.guard.hosts.of(context)
        if request.request_id and match_id_for(request.request_id) in self.arena.matches:
            creator = None  # a retry: it makes no match (the first's, or refused as reused)
        # To its end whether or not the call lives: the store makes the match either way
        # (its work runs to completion), and a match made must count.
        hosted = await to_completion(self._counted_create(request, creator))
        return spb.CreateMatchResponse(match=match_info(hosted))

    async def _counted_create(
        self, request: spb.CreateMatchRequest, creator: str | None
    ) -> HostedMatch:
        with self.anonymous.creating(creator) as created:  # its place held while it is made
            hosted = await self._create(request)
            created(hosted.match_id)
        return hosted

    async def _create(self, request: spb.CreateMatchRequest) -> HostedMatch:
        if request.seed and len(request.seed) != 32:
            raise BadRequest(f"seed must be exactly 32 bytes, got {len(request.seed)}")
        check_request_id(request.request_id)
        check_secret("creator_secret", request.creator_secret)
        reserved = reservations(request)
        house = self.house.planned(request, list(reserved))
        options = (
            parsed("options", lambda: codec.dict_of(request.options))
            if request.HasField("options")
            else {}
        )
        hosted = await self.arena.create(
            request.game,
            request.players or None,
            options,
            control=TimeControl.of_message(request.time_control),
            seed=request.seed or None,
            request_id=request.request_id or None,
            reserved=reserved,
            creator_secret=request.creator_secret or None,
        )
        await house.seat(hosted)
        return hosted

    @unary
    async def JoinMatch(
        self, request: spb.JoinMatchRequest, context: Context
    ) -> spb.JoinMatchResponse:
        self._refuse_new()
        self.guard.limit(self.guard.throttles.join, "JoinMatch", context)
        hosted = await self.arena.get(request.match_id)
        seat = request.seat if request.HasField("seat") else None
        if seat is not None:
            check_seat(hosted, seat)
        check_text("name", request.name, MAX_NAME)
        check_secret("token", request.token)
        check_secret("join_secret", request.join_secret)
        check_contribution(hosted, request.contribution)
        if hosted.ended:
            raise NotRunning("the match has ended")
        target = await self.router.writer(request.match_id, context)
        if isinstance(target, str):
            joined: spb.JoinMatchResponse = await self.router.forward(
                target, "JoinMatch", request, context, credential=False
            )
            return joined
        seat, token = await target.join(
            seat,
            request.name,
            request.token or None,
            request.join_secret or None,
            contribution=request.contribution or None,
        )
        info = self.embargo.seated(target, match_info(target), context)
        return spb.JoinMatchResponse(seat=seat, token=token, match=info)

    @unary
    async def CancelMatch(
        self, request: spb.CancelMatchRequest, context: Context
    ) -> spb.CancelMatchResponse:
        self._refuse_new()
        _, why = await self.guard.cancelling(self.arena, request.match_id, request.reason, context)
        target = await self.router.writer(request.match_id, context)
        if isinstance(target, str):
            cancelled: spb.CancelMatchResponse = await self.router.forward(
                target, "CancelMatch", request, context, credential=True
            )
            return cancelled
        await target.cancel(why)
        return spb.CancelMatchResponse(match=match_info(target))

    @unary
    async def SubmitAction(
        self, request: spb.SubmitActionRequest, context: Context
    ) -> spb.SubmitActionResponse:
        started = time.perf_counter()
        if metrics.STAGE_TIMES:
            metrics.begin()
        self._refuse_new()
        target = await self.router.writer(request.match_id, context)
        if isinstance(target, str):  # the owner checks the rest
            forwarded: spb.SubmitActionResponse = await self.router.forward(
                target, "SubmitAction", request, context, credential=True
            )
            return forwarded
        done = await self._apply(target, request, context, started)
        answer = spb.SubmitActionResponse(
            first_seq=done.first_seq,
            last_seq=done.last_seq,
            events=await projected(target, done, request.seat),
        )
        if metrics.STAGE_TIMES:
            metrics.lap("result")
        return answer

    async def act(
        self, request: spb.SubmitActionRequest, context: Context, started: float
    ) -> tuple[int, int]:
        """One action of a Play call, here or at the owner: the seqs it wrote. The call proved
        its seat's token when it opened (a seat's token never changes), so the action is not
        authorised again here; forwarded, it carries the token to the owner, which checks it."""
        self._refuse_new()
        target = await self.router.writer(request.match_id, context)
        if isinstance(target, str):
            answer: spb.SubmitActionResponse = await self.router.forward(
                target, "SubmitAction", request, context, credential=True
            )
            return answer.first_seq, answer.last_seq
        done = await self._apply(target, request, context, started, authorized=True)
        return done.first_seq, done.last_seq

    async def _apply(
        self,
        hosted: HostedMatch,
        request: spb.SubmitActionRequest,
        context: Context,
        started: float,
        *,
        authorized: bool = False,
    ) -> Submitted:
        """Check and apply one action of a match this replica writes (``authorized``: the
        caller already proved it holds the seat's token on this match)."""
        check_seat(hosted, request.seat)
        if not authorized:
            authorize(hosted, request.seat, context)
        check_request_id(request.request_id)
        try:
            action = codec.action_from_pb(request.action)
        except ValueError as error:
            detail = f"action: {error}"
            await hosted.refuse_malformed(
                request.seat, request.action, request.expected_seq, detail
            )
            raise BadRequest(detail) from None
        if metrics.STAGE_TIMES:
            metrics.lap("authorise")
        done = await hosted.submit(request.seat, action, request.expected_seq, request.request_id)
        if metrics.STAGE_TIMES:
            metrics.begin()
        if done.applied:
            metrics.ACTIONS.inc()
            metrics.ACTION_SECONDS.observe(time.perf_counter() - started)
        return done

    # -- streams -------------------------------------------------------------------------

    async def opened_on(self, match_id: str, seat: int | None, context: Context) -> HostedMatch:
        """The match a stream opens on, as ``seat`` (``None``: a spectator). One this process
        does not hold (an ended match it let go of, one another replica writes) is first read
        from the store and replayed, a whole log on the event loop, before a token could be
        checked against it in memory: a caller that does not hold the seat by the store's
        record takes its turn at the read gate for that, as GetMatch's readers do, so that
        opening streams on old matches in a loop cannot hold every match's loop. A match held
        here costs nothing to open, and the seat's own player never waits at the gate."""
        if match_id in self.arena.matches:
            return await self.arena.get(match_id)
        if seat is not None and await self.arena.holds_stored_seat(
            match_id, seat, credential(context)
        ):
            return await self.arena.get(match_id)
        async with self.guard.reading(context):
            return await self.arena.get(match_id)

    @streaming
    def Play(
        self, requests: AsyncIterator[spb.PlayRequest | Undecodable], context: Context
    ) -> AsyncIterator[spb.PlayResponse | bytes]:
        """A seat's events and its actions on one stream: the cheap path for bots."""
        self._refuse_new()
        return PlayCall(self, requests, context).run()

    @streaming
    def StreamEvents(
        self, request: spb.StreamEventsRequest, context: Context
    ) -> AsyncIterator[spb.StreamEventsResponse | bytes]:
        return self._events(
            spb.StreamEventsResponse,
            request.match_id,
            request.seat,
            request.after_seq,
            context,
            batched=request.batched,
        )

    @streaming
    def WatchMatch(
        self, request: spb.WatchMatchRequest, context: Context
    ) -> AsyncIterator[spb.WatchMatchResponse | bytes]:
        return self._events(  # a spectator: seat None, prompted for nothing
            spb.WatchMatchResponse,
            request.match_id,
            None,
            request.after_seq,
            context,
            batched=request.batched,
        )

    async def _events(
        self,
        kind: type[Response],
        match_id: str,
        seat: int | None,
        after_seq: int,
        context: Context,
        *,
        batched: bool = False,
    ) -> AsyncIterator[Response | bytes]:
        """The stream of a match's events as ``seat`` (``None``: a spectator) may see them, as
        messages of ``kind``: what StreamEvents and WatchMatch answer (``batched``: a
        seat's writes each on one message, a spectator's paced batches)."""
        hosted = await self.opened_on(match_id, seat, context)
        if seat is not None:
            check_seat(hosted, seat)
            authorize(hosted, seat, context)
        else:
            await self.embargo.check(hosted, context)
        drop = self.streams.dropper(context)
        events = self.streams.events(
            hosted, seat, after_seq, context=context, on_drop=drop, batched=batched
        )
        async with contextlib.aclosing(events) as stream:
            async for item in stream:
                if metrics.STAGE_TIMES:
                    metrics.begin()
                answer = response(kind, item)
                if metrics.STAGE_TIMES:
                    metrics.lap("send: respond")
                yield answer
                del item, answer


@functools.cache
def described_games() -> tuple[spb.GameDescription, ...]:
    """Every game as ListGames shows it, built once: building them took 1.7 ms of the event
    loop a call (copying them into an answer, 0.09), and ListGames is neither gated nor
    limited, so anyone calling it in a loop held the loop as the reads' flood did."""
    return tuple(describe(spec) for spec in GAMES.values())


@functools.cache
def _games_bytes() -> bytes:
    return spb.ListGamesResponse(games=described_games()).SerializeToString()


def listed_games(house: spb.HouseBots | None) -> bytes:
    """ListGames' answer as bytes: the games' made once, then the offer of house bots (a
    message's bytes followed by another's of the same type are the two merged). Copying the
    games into a message and serializing it cost about 0.2 ms of the event loop a call,
    which anyone polling ListGames (every browser that opens the app) made the players pay."""
    offer = b"" if house is None else spb.ListGamesResponse(house_bots=house).SerializeToString()
    return _games_bytes() + offer


def describe(spec: GameSpec) -> spb.GameDescription:
    """A game as ListGames shows it."""
    return spb.GameDescription(
        name=spec.name,
        title=spec.title,
        summary=spec.summary,
        players=list(spec.players),
        default_players=spec.default_players,
        lowest_wins=spec.lowest_wins,
        options_schema=codec.struct_of(spec.options.describe()),
        default_options=codec.struct_of(default_of(spec.options)),
    )


async def projected(hosted: HostedMatch, done: Submitted, seat: int) -> list[pb.Event]:
    """A submission's events as ``seat`` may see them; a retry reads them from the log."""
    if done.applied:
        projector = PbProjector(done.voluntary_before, hosted.readers.jokers)
        return [project_for(e, seat, projector) for e in done.events]
    projector = PbProjector(hosted.readers.voluntary_at(done.first_seq), hosted.readers.jokers)
    stored = await hosted.read_log(
        after_seq=done.first_seq - 1, limit=done.last_seq - done.first_seq + 1
    )
    return [project_for(pb.Event.FromString(item.payload), seat, projector) for item in stored]
