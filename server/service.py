"""The MatchService servicer: thin handlers over the arena, with every error mapped in one place."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hmac
import json
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

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
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from . import metrics
from .errors import (
    BadRequest,
    Forbidden,
    Moved,
    NotRunning,
    RequestReused,
    SeatTaken,
    Stale,
    Throttled,
)
from .hosting import Arena, HostedMatch, PbProjector, Submitted, project_for
from .limits import Rate, RateLimiter, peer_host
from .peers import FORWARD_TIMEOUT, OwnerUnreachable, Peers, forwarded
from .store import InvalidPageToken, LeaseLost, StoreConflict, StoreError, UnknownMatch
from .wire import Undecodable

log = structlog.get_logger(__name__)

T = TypeVar("T")

REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,64}$")
SECRET = re.compile(r"^[\x21-\x7e]{32,128}$")
"""Client-chosen seat tokens, join secrets and creator secrets."""
SECRET_RULE = "32 to 128 printable ASCII characters, no spaces"
MAX_PAGE = 1000
MAX_NAME = 64
MAX_REASON = 200
PLAY_QUEUE = 2048
"""Messages a Play call may have waiting for its client; past that the client is not
reading, and the call ends (UNAVAILABLE: resume from the last seq)."""
STORE_DOWN = "the event store is unavailable: retry shortly, with the same request id"
FELL_BEHIND = "the stream fell behind or the server is draining: resume from your last seq"
RETRY_AFTER = "cardarena-retry-after-ms"
STATUS_OF = {
    "waiting": spb.MATCH_STATUS_WAITING,
    "running": spb.MATCH_STATUS_RUNNING,
    "ended": spb.MATCH_STATUS_ENDED,
}


@dataclass(frozen=True)
class Access:
    """Who may do what: the operator token (``None``: an open server, for local use) and the
    per-peer rates of creating and joining for everyone but the operator."""

    operator_token: str | None = None
    create_rate: Rate = field(default_factory=lambda: Rate(50.0, 500))
    join_rate: Rate = field(default_factory=lambda: Rate(200.0, 2000))


class Refused(Exception):
    """A request refused with a specific status code (and trailing metadata, if any)."""

    def __init__(
        self, code: grpc.StatusCode, message: str, trailers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        super().__init__(message)
        self.code = code
        self.trailers = trailers


_CODES: tuple[
    tuple[type[BaseException] | tuple[type[BaseException], ...], grpc.StatusCode], ...
] = (
    ((Moved, LeaseLost, OwnerUnreachable), grpc.StatusCode.UNAVAILABLE),
    (
        (BadRequest, MalformedAction, OptionError, InvalidPageToken),
        grpc.StatusCode.INVALID_ARGUMENT,
    ),
    ((NotYourTurn, IllegalAction, NotRunning, ActionError), grpc.StatusCode.FAILED_PRECONDITION),
    ((Stale, StoreConflict), grpc.StatusCode.ABORTED),
    (UnknownMatch, grpc.StatusCode.NOT_FOUND),
    (StoreError, grpc.StatusCode.UNAVAILABLE),  # the database is away (a write may stand)
    ((SeatTaken, RequestReused), grpc.StatusCode.ALREADY_EXISTS),
    (Forbidden, grpc.StatusCode.PERMISSION_DENIED),
    (Throttled, grpc.StatusCode.RESOURCE_EXHAUSTED),
)
"""The one table from errors to status codes. The first row an error is an instance of
wins, so a subclass (LeaseLost, UnknownMatch, InvalidPageToken are StoreErrors) comes before
its base. Anything not in it is a fault of the server: INTERNAL."""


def status_for(error: BaseException) -> grpc.StatusCode | None:
    if isinstance(error, Refused):
        return error.code
    if isinstance(error, grpc.aio.AioRpcError):  # the owner's answer to a forwarded call
        return error.code()
    for kinds, code in _CODES:
        if isinstance(error, kinds):
            return code
    return None


def refusal_of(error: Exception) -> Refused:
    """A known error as its status and message; anything else as INTERNAL with an error id
    (the details go to the log, never to the client)."""
    if isinstance(error, Refused):
        return error
    code = status_for(error)
    if code is None:
        error_id = secrets.token_hex(6)
        log.error(
            "unexpected_error",
            error_id=error_id,
            error_type=type(error).__name__,
            exc_info=error,
        )
        return Refused(
            grpc.StatusCode.INTERNAL, f"internal error {error_id}: the server's log has the details"
        )
    if isinstance(error, grpc.aio.AioRpcError):
        return Refused(code, error.details() or code.name)
    if isinstance(error, StoreError) and code == grpc.StatusCode.UNAVAILABLE:
        # Where the database is and what it said is for the operator's log, not a client.
        log.warning("store_unavailable", error=str(error))
        return Refused(code, STORE_DOWN)
    if isinstance(error, Throttled):
        return Refused(code, str(error), ((RETRY_AFTER, str(error.retry_after_ms)),))
    return Refused(code, str(error))


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """Whatever goes wrong inside becomes a ``Refused`` (see :func:`refusal_of`)."""
    try:
        yield
    except Exception as error:
        refused = refusal_of(error)
        if refused is error:
            raise
        raise refused from error


def parsed(what: str, parse: Callable[[], T]) -> T:
    """A field decoded by the codec, whose ``ValueError`` is then the client's mistake."""
    try:
        return parse()
    except ValueError as error:
        raise BadRequest(f"{what}: {error}") from None


def check_request_id(request_id: str) -> None:
    """Empty (none), or 1..64 printable ASCII characters without spaces."""
    if request_id and not REQUEST_ID.match(request_id):
        raise BadRequest("request_id is 1..64 printable ASCII characters without spaces")


def check_secret(field: str, value: str) -> None:
    if value and not SECRET.match(value):
        raise BadRequest(f"{field} is {SECRET_RULE}")


def authorization_of(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    """The raw ``authorization`` metadata, to pass on unread when forwarding."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return None


def credential(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    """The secret of ``authorization: Bearer <secret>``, if the call carries one."""
    value = authorization_of(context)
    if value is not None and value.startswith("Bearer "):
        return value[len("Bearer ") :]
    return None


def bearer_token(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    token = credential(context)
    if token is None:
        raise Refused(
            grpc.StatusCode.UNAUTHENTICATED,
            "send the seat's token as metadata 'authorization: Bearer <token>'",
        )
    return token


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
        raise BadRequest(f"seat {seat} does not exist (0..{hosted.record.players - 1})")


def check_text(field: str, value: str, limit: int) -> None:
    """Names and reasons: at most ``limit`` characters, none of them a control character."""
    if len(value) > limit:
        raise BadRequest(f"{field} is at most {limit} characters")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value):
        raise BadRequest(f"{field} may not contain control characters")


def reservations(request: spb.CreateMatchRequest) -> dict[int, str]:
    reserved: dict[int, str] = {}
    for i, reservation in enumerate(request.reserved_seats):
        where = f"reserved_seats[{i}]"
        if reservation.WhichOneof("holder") != "join_secret":
            raise BadRequest(f"{where}: name who may take the seat (join_secret)")
        check_secret(f"{where}.join_secret", reservation.join_secret)
        if reservation.seat in reserved:
            raise BadRequest(f"{where}: seat {reservation.seat} is reserved twice")
        reserved[reservation.seat] = reservation.join_secret
    return reserved


def match_info(hosted: HostedMatch) -> spb.MatchInfo:
    config = json.loads(hosted.record.config)
    info = spb.MatchInfo(
        match_id=hosted.match_id,
        game=hosted.record.game,
        players=hosted.record.players,
        options=codec.struct_of(config["options"]),
        status=STATUS_OF[hosted.status],
        seats=[
            spb.SeatInfo(
                seat=i, taken=s.token_hash is not None, name=s.name, reserved=s.reserved is not None
            )
            for i, s in enumerate(hosted.seats)
        ],
        created_unix_ms=_unix_ms(hosted.record.created_at),
        seed_commitment=hosted.record.commitment,
        last_seq=hosted.last_seq,
        last_hash=hosted.last_hash,
        time_control=spb.TimeControl(move_ms=hosted.move_ms),
        totals=[codec.score_to_pb(t) for t in hosted.engine.totals],
        winners=list(hosted.engine.winners),
        cancelled=hosted.cancelled,
    )
    if hosted.ended:
        info.seed = hosted.record.seed
    return info


def _unix_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


class Throttles:
    """Per-peer limits, and a warning about a peer at most once a second."""

    def __init__(self, access: Access) -> None:
        self.create = RateLimiter(access.create_rate)
        self.join = RateLimiter(access.join_rate)
        self._warned: OrderedDict[str, float] = OrderedDict()

    def check(self, limiter: RateLimiter, call: str, context: Any) -> None:
        wait = limiter.wait_for(peer_host(context.peer() or ""))
        if wait > 0:
            retry_ms = max(1, int(wait * 1000 + 0.999))
            raise Throttled(
                f"too many {call} calls from this address: retry in {retry_ms} ms", retry_ms
            )

    def warn(self, context: Any, event: str, **fields: Any) -> None:
        """Log ``event`` for this peer unless it was logged for it in the last second."""
        peer = peer_host(context.peer() or "")
        now = time.monotonic()
        if now - self._warned.get(peer, -1.0) < 1.0:
            return
        self._warned[peer] = now
        self._warned.move_to_end(peer)
        while len(self._warned) > 10_000:
            self._warned.popitem(last=False)
        log.warning(event, peer=peer, **fields)


class MatchService:
    """The handlers of ``cardarena.v1.MatchService`` (registered by ``wire.add_service``)."""

    def __init__(
        self, arena: Arena, peers: Peers | None = None, access: Access | None = None
    ) -> None:
        self.arena = arena
        self.peers = peers
        self.access = access or Access()
        self.throttles = Throttles(self.access)
        self.draining = False
        self._background: set[asyncio.Task[None]] = set()

    # -- plumbing ------------------------------------------------------------------------

    async def refuse_undecodable(self, request: Undecodable, context: Any) -> NoReturn:
        self.throttles.warn(context, "undecodable_request", type=request.type_name)
        await self._abort(context, Refused(grpc.StatusCode.INVALID_ARGUMENT, request.message))

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
        if refused.trailers:
            context.set_trailing_metadata(refused.trailers)
        await context.abort(refused.code, str(refused))
        raise AssertionError("abort returns only by raising")

    def _dropper(self, context: Any) -> Callable[[], None]:
        """What ends a stream whose client stopped reading: an UNAVAILABLE abort from a task
        of its own, which works even while the handler waits to write to that client."""
        dropped: list[bool] = []

        async def abort() -> None:
            with contextlib.suppress(Exception):
                await self._abort(context, Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND))

        def drop() -> None:
            if not dropped:
                dropped.append(True)
                task = asyncio.ensure_future(abort())
                self._background.add(task)
                task.add_done_callback(self._background.discard)

        return drop

    def _is_operator(self, context: Any) -> bool:
        """Whether the call carries the operator token (constant-time compare)."""
        token = self.access.operator_token
        offered = credential(context)
        return (
            token is not None
            and offered is not None
            and hmac.compare_digest(offered.encode(), token.encode())
        )

    def _limit(self, limiter: RateLimiter, call: str, context: Any) -> None:
        """Everyone but the operator, and but calls another replica forwards, is limited (that
        replica limited the client already)."""
        if self._is_operator(context):
            return
        if self.peers is not None and self.peers.vouched(context.invocation_metadata()):
            return
        self.throttles.check(limiter, call, context)

    # -- calls ---------------------------------------------------------------------------

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
                if self.access.operator_token is not None and not self._is_operator(context):
                    if credential(context) is None:
                        raise Refused(
                            grpc.StatusCode.UNAUTHENTICATED,
                            "this server creates matches for its operator only: send the"
                            " operator token as metadata 'authorization: Bearer <token>'",
                        )
                    raise Forbidden("the credential is not this server's operator token")
                self._limit(self.throttles.create, "CreateMatch", context)
                if request.seed and len(request.seed) != 32:
                    raise BadRequest(f"seed must be exactly 32 bytes, got {len(request.seed)}")
                check_request_id(request.request_id)
                check_secret("creator_secret", request.creator_secret)
                reserved = reservations(request)
                options = (
                    parsed("options", lambda: codec.dict_of(request.options))
                    if request.HasField("options")
                    else {}
                )
                hosted = await self.arena.create(
                    request.game,
                    request.players or None,
                    options,
                    move_ms=request.time_control.move_ms,
                    seed=request.seed or None,
                    request_id=request.request_id or None,
                    reserved=reserved,
                    creator_secret=request.creator_secret or None,
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
                    raise BadRequest(f"page_size is at most {MAX_PAGE}, got {size}")
                status = {v: k for k, v in STATUS_OF.items()}.get(request.status)
                store_status = {"waiting": "running"}.get(status or "", status)
                records, token = await self.arena.store.list_matches(
                    status=store_status, page_size=size, page_token=request.page_token or None
                )
                infos = [await self._listed(record) for record in records]
            if status in ("waiting", "running"):
                infos = [i for i in infos if i.status == STATUS_OF[status]]
            return spb.ListMatchesResponse(matches=infos, next_page_token=token or "")
        except Refused as refused:
            await self._abort(context, refused)

    async def _listed(self, record: Any) -> spb.MatchInfo:
        """A listed match: from memory if hosted here, an ended one from its stored record,
        seats and the last entries of its log (no replay), anything else loaded."""
        hosted = self.arena.matches.get(record.match_id)
        if hosted is not None or record.status != "ended":
            return match_info(hosted or await self.arena.get(record.match_id))
        tail = await self.arena.store.read_tail(record.match_id, 3)
        kinds = {
            e.WhichOneof("kind"): e for e in map(pb.Event.FromString, (s.payload for s in tail))
        }
        if "match_ended" in kinds:
            ended = kinds["match_ended"].match_ended
            totals, winners, cancelled = list(ended.totals), list(ended.winners), False
        elif "match_cancelled" in kinds:
            totals, winners = list(kinds["match_cancelled"].match_cancelled.totals), []
            cancelled = True
        else:  # a log that predates totals in MatchCancelled
            return match_info(await self.arena.get(record.match_id))
        seats = {s.seat: s for s in await self.arena.store.get_seats(record.match_id)}
        config = json.loads(record.config)
        reserved = config.get("reserved", {})
        return spb.MatchInfo(
            match_id=record.match_id,
            game=record.game,
            players=record.players,
            options=codec.struct_of(config["options"]),
            status=spb.MATCH_STATUS_ENDED,
            seats=[
                spb.SeatInfo(
                    seat=i,
                    taken=i in seats,
                    name=seats[i].name if i in seats else "",
                    reserved=str(i) in reserved,
                )
                for i in range(record.players)
            ],
            created_unix_ms=_unix_ms(record.created_at),
            seed_commitment=record.commitment,
            last_seq=tail[-1].seq,
            last_hash=tail[-1].hash,
            time_control=spb.TimeControl(move_ms=int(config.get("move_ms", 0))),
            totals=totals,
            winners=winners,
            seed=record.seed,
            cancelled=cancelled,
        )

    async def JoinMatch(self, request: spb.JoinMatchRequest, context: Any) -> spb.JoinMatchResponse:
        try:
            self._check_open()
            with refusals():
                self._limit(self.throttles.join, "JoinMatch", context)
                hosted = await self.arena.get(request.match_id)
                seat = request.seat if request.HasField("seat") else None
                if seat is not None:
                    check_seat(hosted, seat)
                check_text("name", request.name, MAX_NAME)
                check_secret("token", request.token)
                check_secret("join_secret", request.join_secret)
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
                seat, token = await target.join(
                    seat, request.name, request.token or None, request.join_secret or None
                )
            return spb.JoinMatchResponse(seat=seat, token=token, match=match_info(target))
        except Refused as refused:
            await self._abort(context, refused)

    async def CancelMatch(
        self, request: spb.CancelMatchRequest, context: Any
    ) -> spb.CancelMatchResponse:
        try:
            self._check_open()
            with refusals():
                check_text("reason", request.reason, MAX_REASON)
                hosted = await self.arena.get(request.match_id)
                secret = credential(context)
                if secret is None:
                    raise Refused(
                        grpc.StatusCode.UNAUTHENTICATED,
                        "send the operator token or the match's creator secret as metadata"
                        " 'authorization: Bearer <secret>'",
                    )
                operator = self._is_operator(context)
                if not operator and not self.arena.may_cancel(hosted, secret):
                    raise Forbidden("only the operator or the match's creator may cancel it")
                target = await self._writer(request.match_id, context)
                if isinstance(target, str):
                    assert self.peers is not None
                    cancelled: spb.CancelMatchResponse = await self.peers.forward(
                        target,
                        "CancelMatch",
                        lambda stub, metadata: stub.CancelMatch(
                            request, metadata=metadata, timeout=FORWARD_TIMEOUT
                        ),
                        authorization_of(context),
                    )
                    return cancelled
                reason = "cancelled by " + ("the operator" if operator else "its creator")
                await target.cancel(f"{reason}: {request.reason}" if request.reason else reason)
            return spb.CancelMatchResponse(match=match_info(target))
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
        decoded = parsed("action", lambda: codec.action_from_pb(action))
        done = await hosted.submit(seat, decoded, expected_seq, request_id)
        if done.applied:
            metrics.ACTIONS.inc()
            metrics.ACTION_SECONDS.observe(time.perf_counter() - started)
        return done

    async def Play(
        self, requests: AsyncIterator[spb.PlayRequest | Undecodable], context: Any
    ) -> AsyncIterator[spb.PlayResponse]:
        """A seat's events and its actions on one stream: the cheap path for bots.

        Two tasks feed one bounded queue: the seat's events, and one result per action. A
        client that stops reading overflows it and the call ends (UNAVAILABLE; resume from
        the last seq). When the match ends, the result of the action in flight (the one that
        ended it) is sent before the stream closes.
        """
        out: asyncio.Queue[spb.PlayResponse | BaseException | None] = asyncio.Queue(PLAY_QUEUE)
        drop = self._dropper(context)
        idle = asyncio.Event()
        idle.set()
        tasks: list[asyncio.Task[None]] = []

        def send(item: spb.PlayResponse | BaseException | None) -> None:
            try:
                out.put_nowait(item)
            except asyncio.QueueFull:
                drop()

        try:
            self._check_open()
            with refusals():
                first = await anext(aiter(requests), None)
                if isinstance(first, Undecodable):
                    self.throttles.warn(context, "undecodable_request", type=first.type_name)
                    raise BadRequest(first.message)
                if first is None or first.WhichOneof("kind") != "open":
                    raise BadRequest("send PlayOpen first, then actions")
                opening = first.open
                hosted = await self.arena.get(opening.match_id)
                check_seat(hosted, opening.seat)
                authorize(hosted, opening.seat, context)

            async def pump() -> None:
                try:
                    stream = self._stream(hosted, opening.seat, opening.after_seq, on_drop=drop)
                    async for item in stream:
                        if isinstance(item, pb.Snapshot):
                            send(spb.PlayResponse(snapshot=item))
                        elif isinstance(item, pb.YourTurn):
                            send(spb.PlayResponse(your_turn=item))
                        else:
                            send(spb.PlayResponse(event=item))
                    await idle.wait()  # the answer to the action that ended the match first
                    send(None)
                except BaseException as error:  # handed to the handler, which aborts with it
                    send(error)

            async def act() -> None:
                try:
                    async for request in requests:
                        idle.clear()
                        try:
                            result = await self._play_action(opening, request, context)
                            send(spb.PlayResponse(result=result))
                        finally:
                            idle.set()
                except grpc.aio.AbortError:
                    return  # the call was ended (a dropped reader, a drain): nothing to answer
                except Exception as error:  # ends the call: never leave a bot waiting
                    send(refusal_of(error))

            tasks = [asyncio.create_task(pump()), asyncio.create_task(act())]
            while True:
                item = await out.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        except Refused as refused:
            await self._abort(context, refused)
        finally:
            for task in tasks:
                task.cancel()

    async def _play_action(
        self, opening: spb.PlayOpen, request: spb.PlayRequest | Undecodable, context: Any
    ) -> spb.ActionResult:
        """One PlayAction, answered as its result (a refusal too: the stream stays open). An
        undecodable message ends the call instead: nothing in it can be answered."""
        if isinstance(request, Undecodable):
            self.throttles.warn(context, "undecodable_request", type=request.type_name)
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, request.message)
        act = request.act
        # Echoed only once it is known to be an id (at most 64 characters): a huge one would
        # otherwise sit in the call's queue as many times as the client sends it.
        echo = act.request_id if REQUEST_ID.match(act.request_id) else ""
        result = spb.ActionResult(request_id=echo)
        try:
            with refusals():
                if request.WhichOneof("kind") != "act":
                    raise BadRequest("after PlayOpen, send only PlayAction messages")
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
                    result.first_seq, result.last_seq = answer.first_seq, answer.last_seq
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
        return result

    async def _projected(self, hosted: HostedMatch, done: Submitted, seat: int) -> list[pb.Event]:
        """The submission's events as ``seat`` may see them; a retry re-reads them from the log."""
        if done.applied:
            projector = PbProjector(done.voluntary_before)
            return [project_for(e, seat, projector) for e in done.events]
        projector = PbProjector(hosted.voluntary_at(done.first_seq))
        stored = await hosted.store.read_events(
            hosted.match_id, after_seq=done.first_seq - 1, limit=done.last_seq - done.first_seq + 1
        )
        return [project_for(pb.Event.FromString(item.payload), seat, projector) for item in stored]

    async def StreamEvents(
        self, request: spb.StreamEventsRequest, context: Any
    ) -> AsyncIterator[spb.StreamEventsResponse]:
        try:
            with refusals():
                hosted = await self.arena.get(request.match_id)
                check_seat(hosted, request.seat)
                authorize(hosted, request.seat, context)
                stream = self._stream(
                    hosted, request.seat, request.after_seq, on_drop=self._dropper(context)
                )
                async for item in stream:
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
                stream = self._stream(
                    hosted, None, request.after_seq, on_drop=self._dropper(context)
                )
                async for item in stream:
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
        self,
        hosted: HostedMatch,
        seat: int | None,
        after_seq: int,
        *,
        on_drop: Callable[[], None],
    ) -> AsyncIterator[pb.Snapshot | pb.Event | pb.YourTurn]:
        """Snapshot, then stored events after ``after_seq``, then live ones: gap-free."""
        self._check_open()
        async with hosted.lock:
            sub = hosted.subscribe(seat, on_drop)
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
