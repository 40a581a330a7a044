"""The MatchService servicer: thin handlers over the arena, with every error mapped in one place."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, NoReturn

import grpc
import structlog

from cardarena.engine import (
    GAMES,
    ActionError,
    IllegalAction,
    MalformedAction,
    NotYourTurn,
    OptionError,
)
from cardarena.engine.options import default_of
from cardarena.v1 import codec, service_pb2_grpc
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from . import metrics
from .arena import Arena, DifferentRequest
from .hosting import (
    HostedMatch,
    Moved,
    NotRunning,
    PbProjector,
    SeatTaken,
    Stale,
    Submitted,
    project_for,
)
from .peers import FORWARD_TIMEOUT, OwnerUnreachable, Peers, forwarded
from .store import LeaseLost, StoreConflict, StoreError, UnknownMatch

log = structlog.get_logger(__name__)

REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,64}$")
CLIENT_TOKEN = re.compile(r"^[\x21-\x7e]{32,128}$")
MAX_PAGE = 1000
STORE_DOWN = "the event store is unavailable: retry shortly, with the same request id"
FELL_BEHIND = "the stream fell behind or the server is draining: resume from your last seq"
STATUS_OF = {
    "waiting": spb.MATCH_STATUS_WAITING,
    "running": spb.MATCH_STATUS_RUNNING,
    "ended": spb.MATCH_STATUS_ENDED,
}


class Draining(Exception):
    """The server is shutting down: clients should reconnect and resume."""


class Refused(Exception):
    """A request refused with a specific status code."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def status_for(error: BaseException) -> grpc.StatusCode | None:
    """The one table from errors to status codes."""
    if isinstance(error, Refused):
        return error.code
    if isinstance(error, Moved | LeaseLost | OwnerUnreachable):
        return grpc.StatusCode.UNAVAILABLE
    if isinstance(error, grpc.aio.AioRpcError):  # the owner's answer to a forwarded call
        return error.code()
    if isinstance(error, MalformedAction | OptionError | ValueError):
        return grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(error, NotYourTurn | IllegalAction | NotRunning | ActionError):
        return grpc.StatusCode.FAILED_PRECONDITION
    if isinstance(error, Stale | StoreConflict):
        return grpc.StatusCode.ABORTED
    if isinstance(error, UnknownMatch):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(error, StoreError):  # the database is away (a write may or may not stand)
        return grpc.StatusCode.UNAVAILABLE
    if isinstance(error, SeatTaken | DifferentRequest):
        return grpc.StatusCode.ALREADY_EXISTS
    if isinstance(error, Draining):
        return grpc.StatusCode.UNAVAILABLE
    return None


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """Turn a known error into a ``Refused`` with its status; let anything else through."""
    try:
        yield
    except Refused:
        raise
    except Exception as error:
        code = status_for(error)
        if code is None:
            log.exception("unexpected_error", error_type=type(error).__name__)
            raise
        if isinstance(error, grpc.aio.AioRpcError):
            message = error.details() or code.name
        elif isinstance(error, StoreError) and code == grpc.StatusCode.UNAVAILABLE:
            # Where the database is and what it said is for the operator's log, not a client.
            log.warning("store_unavailable", error=str(error))
            message = STORE_DOWN
        else:
            message = str(error)
        raise Refused(code, message) from error


def check_request_id(request_id: str) -> None:
    """Empty (none), or 1..64 printable ASCII characters without spaces."""
    if request_id and not REQUEST_ID.match(request_id):
        raise ValueError("request_id is 1..64 printable ASCII characters without spaces")


def authorization_of(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    """The raw ``authorization`` metadata, to pass on unread when forwarding."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return None


def bearer_token(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :]
    raise Refused(
        grpc.StatusCode.UNAUTHENTICATED,
        "send the seat's token as metadata 'authorization: Bearer <token>'",
    )


def authorize(hosted: HostedMatch, seat: int, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    owner = hosted.seat_of(bearer_token(context))
    if owner is None:
        raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the token is not a seat of this match")
    if owner != seat:
        raise Refused(
            grpc.StatusCode.PERMISSION_DENIED, f"the token is for seat {owner}, not seat {seat}"
        )


def check_seat(hosted: HostedMatch, seat: int) -> None:
    if not 0 <= seat < hosted.record.players:
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"seat {seat} does not exist (0..{hosted.record.players - 1})",
        )


def match_info(hosted: HostedMatch) -> spb.MatchInfo:
    config = json.loads(hosted.record.config)
    status = "ended" if hosted.ended else ("running" if hosted.running else "waiting")
    info = spb.MatchInfo(
        match_id=hosted.match_id,
        game=hosted.record.game,
        players=hosted.record.players,
        options=codec.struct_of(config["options"]),
        status=STATUS_OF[status],
        seats=[
            spb.SeatInfo(seat=i, taken=s.token_hash is not None, name=s.name)
            for i, s in enumerate(hosted.seats)
        ],
        created_unix_ms=_unix_ms(hosted.record.created_at),
        seed_commitment=hosted.record.commitment,
        last_seq=hosted.last_seq,
        last_hash=hosted.last_hash,
        time_control=spb.TimeControl(move_ms=hosted.move_ms),
        totals=[codec.score_to_pb(t) for t in hosted.engine.totals],
        winners=list(hosted.engine.winners),
    )
    if hosted.ended:
        info.seed = hosted.record.seed
    return info


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


class MatchService(service_pb2_grpc.MatchServiceServicer):
    def __init__(self, arena: Arena, peers: Peers | None = None) -> None:
        self.arena = arena
        self.peers = peers
        self.draining = False

    async def _writer(self, match_id: str, context: Any) -> HostedMatch | str:
        """The match if this replica writes it, else the owner's address to forward to (never
        for a call that was itself forwarded: ownership moved, so the client retries)."""
        target = await self.arena.writer_of(match_id)
        if isinstance(target, str) and (
            self.peers is None or forwarded(context.invocation_metadata())
        ):
            raise Moved(match_id)
        return target

    async def _forward_submit(
        self, address: str, request: spb.SubmitActionRequest, context: Any
    ) -> spb.SubmitActionResponse:
        assert self.peers is not None
        response: spb.SubmitActionResponse = await self.peers.forward(
            address,
            "SubmitAction",
            lambda stub, metadata: stub.SubmitAction(
                request, metadata=metadata, timeout=FORWARD_TIMEOUT
            ),
            authorization_of(context),
        )
        return response

    def _check_open(self) -> None:
        if self.draining:
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                "the server is draining: reconnect and resume from your last seq",
            )

    async def _abort(
        self, context: grpc.aio.ServicerContext[Any, Any], refused: Refused
    ) -> NoReturn:
        metrics.ERRORS.labels(refused.code.name).inc()
        await context.abort(refused.code, str(refused))
        raise AssertionError("abort returns only by raising")

    async def ListGames(self, request: spb.ListGamesRequest, context: Any) -> spb.ListGamesResponse:
        games = [
            spb.GameDescription(
                name=spec.name,
                title=spec.title,
                summary=spec.summary,
                players=list(spec.players),
                default_players=spec.default_players,
                lowest_wins=spec.lowest_wins,
                options_schema=codec.struct_of(spec.options.describe()),
                default_options=codec.struct_of(default_of(spec.options)),
            )
            for spec in GAMES.values()
        ]
        return spb.ListGamesResponse(games=games)

    async def CreateMatch(
        self, request: spb.CreateMatchRequest, context: Any
    ) -> spb.CreateMatchResponse:
        try:
            self._check_open()
            with refusals():
                if request.seed and len(request.seed) != 32:
                    raise ValueError(f"seed must be exactly 32 bytes, got {len(request.seed)}")
                check_request_id(request.request_id)
                options = codec.dict_of(request.options) if request.HasField("options") else {}
                hosted = await self.arena.create(
                    request.game,
                    request.players or None,
                    options,
                    move_ms=request.time_control.move_ms,
                    seed=request.seed or None,
                    request_id=request.request_id or None,
                )
            return spb.CreateMatchResponse(match=match_info(hosted))
        except Refused as refused:
            await self._abort(context, refused)

    async def GetMatch(self, request: spb.GetMatchRequest, context: Any) -> spb.GetMatchResponse:
        try:
            with refusals():
                hosted = await self.arena.get(request.match_id)
            return spb.GetMatchResponse(match=match_info(hosted))
        except Refused as refused:
            await self._abort(context, refused)

    async def ListMatches(
        self, request: spb.ListMatchesRequest, context: Any
    ) -> spb.ListMatchesResponse:
        try:
            with refusals():
                size = request.page_size or 100
                if size > MAX_PAGE:
                    raise ValueError(f"page_size is at most {MAX_PAGE}, got {size}")
                status = {v: k for k, v in STATUS_OF.items()}.get(request.status)
                store_status = {"waiting": "running"}.get(status or "", status)
                records, token = await self.arena.store.list_matches(
                    status=store_status, page_size=size, page_token=request.page_token or None
                )
                infos = [match_info(await self.arena.get(r.match_id)) for r in records]
            if status == "waiting":
                infos = [i for i in infos if i.status == spb.MATCH_STATUS_WAITING]
            elif status == "running":
                infos = [i for i in infos if i.status == spb.MATCH_STATUS_RUNNING]
            return spb.ListMatchesResponse(matches=infos, next_page_token=token or "")
        except Refused as refused:
            await self._abort(context, refused)

    async def JoinMatch(self, request: spb.JoinMatchRequest, context: Any) -> spb.JoinMatchResponse:
        try:
            self._check_open()
            with refusals():
                hosted = await self.arena.get(request.match_id)
                seat = request.seat if request.HasField("seat") else None
                if seat is not None:
                    check_seat(hosted, seat)
                if len(request.name) > 64:
                    raise ValueError("a name is at most 64 characters")
                if request.token and not CLIENT_TOKEN.match(request.token):
                    raise ValueError("a token is 32 to 128 printable ASCII characters, no spaces")
                if hosted.ended:
                    raise NotRunning("the match has ended")
                target = await self._writer(request.match_id, context)
                if isinstance(target, str):
                    assert self.peers is not None
                    joined: spb.JoinMatchResponse = await self.peers.forward(
                        target,
                        "JoinMatch",
                        lambda stub, metadata: stub.JoinMatch(
                            request, metadata=metadata, timeout=FORWARD_TIMEOUT
                        ),
                        None,
                    )
                    return joined
                seat, token = await target.join(seat, request.name, request.token or None)
            return spb.JoinMatchResponse(seat=seat, token=token, match=match_info(target))
        except Refused as refused:
            await self._abort(context, refused)

    async def SubmitAction(
        self, request: spb.SubmitActionRequest, context: Any
    ) -> spb.SubmitActionResponse:
        started = time.perf_counter()
        try:
            self._check_open()
            with refusals():
                target = await self._writer(request.match_id, context)
                if isinstance(target, str):  # the owner checks the rest
                    return await self._forward_submit(target, request, context)
                hosted = target
                check_seat(hosted, request.seat)
                authorize(hosted, request.seat, context)
                done = await self._submit(
                    hosted,
                    request.seat,
                    request.action,
                    request.expected_seq,
                    request.request_id,
                    started,
                )
                events = await self._projected(hosted, done, request.seat)
            return spb.SubmitActionResponse(
                first_seq=done.first_seq, last_seq=done.last_seq, events=events
            )
        except Refused as refused:
            await self._abort(context, refused)

    async def _submit(
        self,
        hosted: HostedMatch,
        seat: int,
        action: pb.Action,
        expected_seq: int,
        request_id: str,
        started: float,
    ) -> Submitted:
        """Validate and apply one action (both SubmitAction and Play come through here)."""
        check_request_id(request_id)
        done = await hosted.submit(seat, codec.action_from_pb(action), expected_seq, request_id)
        if done.applied:
            metrics.ACTIONS.inc()
            metrics.ACTION_SECONDS.observe(time.perf_counter() - started)
        return done

    async def Play(
        self, requests: AsyncIterator[spb.PlayRequest], context: Any
    ) -> AsyncIterator[spb.PlayResponse]:
        """A seat's events and its actions on one stream: the cheap path for bots."""
        out: asyncio.Queue[spb.PlayResponse | BaseException | None] = asyncio.Queue()
        tasks: list[asyncio.Task[None]] = []
        try:
            self._check_open()
            first = await anext(aiter(requests), None)
            if first is None or first.WhichOneof("kind") != "open":
                raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "send PlayOpen first, then actions")
            opening = first.open
            with refusals():
                hosted = await self.arena.get(opening.match_id)
                check_seat(hosted, opening.seat)
                authorize(hosted, opening.seat, context)

            async def pump() -> None:
                try:
                    async for item in self._stream(hosted, opening.seat, opening.after_seq):
                        if isinstance(item, pb.Snapshot):
                            await out.put(spb.PlayResponse(snapshot=item))
                        elif isinstance(item, pb.YourTurn):
                            await out.put(spb.PlayResponse(your_turn=item))
                        else:
                            await out.put(spb.PlayResponse(event=item))
                    await out.put(None)
                except BaseException as error:  # handed to the handler, which aborts with it
                    await out.put(error)

            async def act() -> None:
                try:
                    await act_on_each()
                except Exception as error:  # a bug: end the call, never leave a bot waiting
                    log.exception("play_action_failed", match_id=opening.match_id)
                    await out.put(error)

            async def act_on_each() -> None:
                async for request in requests:
                    act = request.act
                    result = spb.ActionResult(request_id=act.request_id)
                    try:
                        with refusals():
                            self._check_open()
                            target = await self._writer(opening.match_id, context)
                            if isinstance(target, str):
                                answer = await self._forward_submit(
                                    target,
                                    spb.SubmitActionRequest(
                                        match_id=opening.match_id,
                                        seat=opening.seat,
                                        action=act.action,
                                        expected_seq=act.expected_seq,
                                        request_id=act.request_id,
                                    ),
                                    context,
                                )
                                result.first_seq = answer.first_seq
                                result.last_seq = answer.last_seq
                            else:
                                done = await self._submit(
                                    target,
                                    opening.seat,
                                    act.action,
                                    act.expected_seq,
                                    act.request_id,
                                    time.perf_counter(),
                                )
                                result.first_seq, result.last_seq = done.first_seq, done.last_seq
                    except Refused as refused:
                        metrics.ERRORS.labels(refused.code.name).inc()
                        result.code, result.message = refused.code.value[0], str(refused)
                    await out.put(spb.PlayResponse(result=result))

            tasks = [asyncio.create_task(pump()), asyncio.create_task(act())]
            while True:
                item = await out.get()
                if item is None:
                    return
                if isinstance(item, Refused):
                    raise item
                if isinstance(item, BaseException):
                    raise item
                yield item
        except Refused as refused:
            await self._abort(context, refused)
        finally:
            for task in tasks:
                task.cancel()

    async def _projected(self, hosted: HostedMatch, done: Submitted, seat: int) -> list[pb.Event]:
        """The submission's events as ``seat`` may see them; a retry re-reads them from the log."""
        if done.applied:
            projector = PbProjector(done.voluntary_before)
            return [project_for(e, seat, projector) for e in done.events]
        projector = PbProjector()
        out = []
        for item in await hosted.store.read_events(hosted.match_id, limit=done.last_seq):
            event = project_for(pb.Event.FromString(item.payload), seat, projector)
            if item.seq >= done.first_seq:
                out.append(event)
        return out

    async def StreamEvents(
        self, request: spb.StreamEventsRequest, context: Any
    ) -> AsyncIterator[spb.StreamEventsResponse]:
        try:
            with refusals():
                hosted = await self.arena.get(request.match_id)
                check_seat(hosted, request.seat)
                authorize(hosted, request.seat, context)
            async for item in self._stream(hosted, request.seat, request.after_seq):
                if isinstance(item, pb.Snapshot):
                    yield spb.StreamEventsResponse(snapshot=item)
                elif isinstance(item, pb.YourTurn):
                    yield spb.StreamEventsResponse(your_turn=item)
                else:
                    yield spb.StreamEventsResponse(event=item)
        except Refused as refused:
            await self._abort(context, refused)

    async def WatchMatch(
        self, request: spb.WatchMatchRequest, context: Any
    ) -> AsyncIterator[spb.WatchMatchResponse]:
        try:
            with refusals():
                hosted = await self.arena.get(request.match_id)
            async for item in self._stream(hosted, None, request.after_seq):
                if isinstance(item, pb.Snapshot):
                    yield spb.WatchMatchResponse(snapshot=item)
                elif isinstance(item, pb.Event):
                    yield spb.WatchMatchResponse(event=item)
        except Refused as refused:
            await self._abort(context, refused)

    async def GetMatchLog(
        self, request: spb.GetMatchLogRequest, context: Any
    ) -> spb.GetMatchLogResponse:
        try:
            with refusals():
                hosted = await self.arena.get(request.match_id)
                if not hosted.ended:
                    raise NotRunning(
                        "the full log and the seed are public once the match has ended"
                    )
                stored = await hosted.store.read_events(hosted.match_id)
            entries = [spb.LogEntry(seq=s.seq, event=s.payload, hash=s.hash) for s in stored]
            return spb.GetMatchLogResponse(
                match=match_info(hosted), entries=entries, seed=hosted.record.seed
            )
        except Refused as refused:
            await self._abort(context, refused)

    async def _stream(
        self, hosted: HostedMatch, seat: int | None, after_seq: int
    ) -> AsyncIterator[pb.Snapshot | pb.Event | pb.YourTurn]:
        """Snapshot, then stored events after ``after_seq``, then live ones: gap-free."""
        self._check_open()
        async with hosted.lock:
            sub = hosted.subscribe(seat)
            snapshot = hosted.snapshot(seat)
        metrics.SUBSCRIBERS.inc()
        try:
            yield snapshot
            if after_seq < snapshot.seq:
                projector = PbProjector()
                for item in await hosted.store.read_events(hosted.match_id, limit=snapshot.seq):
                    event = pb.Event.FromString(item.payload)
                    projected = project_for(event, seat, projector)
                    if item.seq > after_seq:
                        yield projected
            while True:
                if sub.queue.empty():
                    if hosted.ended:
                        return
                    if sub.dropped:
                        raise Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND)
                live = await sub.queue.get()
                if live is None:
                    raise Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND)
                if live.seq > snapshot.seq:
                    yield live
        finally:
            metrics.SUBSCRIBERS.dec()
            hosted.unsubscribe(sub)
