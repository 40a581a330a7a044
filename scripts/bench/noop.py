"""The no-op ceiling: the RPCs the load uses, answered instantly from memory.

Why: the issue asks for the real server's throughput as a fraction of what gRPC itself can
carry. This servicer has no store, no engine and no checks, so driving it with the same clients
at the same concurrency measures that ceiling. It runs in a process of its own, started as the
benchmark's entry point with ``--noop-server``.

SubmitAction answers with the action's event on every stream of the match and a ``YourTurn``
(six canned legal actions) to the next seat round the table; with ``--noop-match-actions`` it
ends each match with ``MatchEnded`` after that many actions, so matches turn over as with the
real server. Its snapshots and prompts are canned, so the replica patterns do not check them.

Play (the bidirectional stream of ``--pattern play``) does exactly what the unary path does,
on one call per seat: PlayOpen registers the call like a StreamEvents stream, each PlayAction
is applied as a SubmitAction is, and its ``ActionResult`` goes to the calling stream. One reader
task per call and one queue, no more: the real server's Play must not be compared with a
ceiling that pays for machinery of its own.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from prometheus_client import start_http_server

from cardarena.engine.cards import french
from cardarena.server import metrics
from cardarena.server.app import GRPC_OPTIONS
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc
from cardarena.v1.codec import action_to_pb

Prompt = pb.Event | pb.YourTurn | spb.ActionResult | None
"""What a stream of the no-op server sends next; ``None`` ends it (the match is over)."""

PROMPT_FIELDS: dict[type, str] = {
    pb.Event: "event",
    pb.YourTurn: "your_turn",
    spb.ActionResult: "result",
}
"""The field of a stream's response that carries each kind of prompt (a result: Play only)."""


class NoopTable:
    """What the no-op server keeps per match: a seq, whose turn it is, the open streams."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.seq = 0
        self.joined = 0
        self.actions = 0
        self.to_act = 0
        self.queues: dict[int, set[asyncio.Queue[Prompt]]] = {s: set() for s in range(players)}

    def push(self, item: Prompt, seat: int | None = None) -> None:
        for s, queues in self.queues.items():
            if seat is None or s == seat:
                for queue in queues:
                    queue.put_nowait(item)

    def open_streams(self) -> int:
        return sum(len(q) for q in self.queues.values())


def event_of_action(seat: int, action: pb.Action, seq: int) -> pb.Event:
    """The log entry an action would make, built without an engine (no rules, no checks)."""
    event = pb.Event(seq=seq)
    kind = action.WhichOneof("kind")
    if kind == "play":
        event.card_played.seat = seat
        event.card_played.card.CopyFrom(action.play)
    elif kind == "exclude_suit":
        event.suit_excluded.seat = seat
        event.suit_excluded.suit = action.exclude_suit
    elif kind == "choose_trump":
        event.trump_chosen.seat = seat
        event.trump_chosen.suit = action.choose_trump
    else:
        event.passed.seat = seat
        event.passed.reason = pb.PASS_REASON_CHOSEN
    return event


# What the no-op server offers as legal: six clubs, about what a hexathlon seat is offered.
CANNED_LEGAL = [action_to_pb(french(0, rank)) for rank in range(2, 8)]


R = TypeVar("R")


def answered_empty(response: type[R]) -> Callable[..., Awaitable[R]]:
    """A servicer method that answers every call with an empty ``response``: one definition for
    the RPCs the no-op server keeps nothing for."""

    async def answer(self: object, request: object, context: object) -> R:
        return response()

    return answer


class NoopService(service_pb2_grpc.MatchServiceServicer):
    """The RPCs the load uses, answered instantly from memory: the ceiling of gRPC itself.

    SubmitAction trusts the client: the action becomes the event at ``expected_seq + 1``, sent
    to every open stream of the match, followed by a YourTurn (six canned legal actions) to the
    next seat round the table, as the real server sends; after ``match_actions`` actions (0:
    never) a MatchEnded event ends the match and its streams. No store, no engine, no token or
    turn check.
    """

    # What the load never calls, answered empty: every RPC of the protocol answers.
    ListGames = answered_empty(spb.ListGamesResponse)
    ListMatches = answered_empty(spb.ListMatchesResponse)
    GetMatchLog = answered_empty(spb.GetMatchLogResponse)
    GetPublicKeys = answered_empty(spb.GetPublicKeysResponse)

    def __init__(self, match_actions: int) -> None:
        self.tables: dict[str, NoopTable] = {}
        self.created = 0
        self.match_actions = match_actions

    async def CreateMatch(  # noqa: N802 - the protocol's name
        self, request: spb.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.CreateMatchResponse:
        self.created += 1
        match_id = f"noop{self.created:08x}"
        players = request.players or 4
        self.tables[match_id] = NoopTable(players)
        return spb.CreateMatchResponse(
            match=spb.MatchInfo(
                match_id=match_id,
                game=request.game,
                players=players,
                status=spb.MATCH_STATUS_WAITING,
            )
        )

    async def GetMatch(  # noqa: N802 - the protocol's name
        self, request: spb.GetMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.GetMatchResponse:
        return spb.GetMatchResponse(match=spb.MatchInfo(match_id=request.match_id))

    async def JoinMatch(  # noqa: N802 - the protocol's name
        self, request: spb.JoinMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.JoinMatchResponse:
        table = self.tables.get(request.match_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such match")
        table.joined += 1
        seat = request.seat if request.HasField("seat") else table.joined - 1
        return spb.JoinMatchResponse(
            seat=seat,
            token=f"{request.match_id}-{seat}",
            match=spb.MatchInfo(match_id=request.match_id, last_seq=table.seq),
        )

    def act(
        self,
        table: NoopTable | None,
        seat: int,
        action: pb.Action,
        expected_seq: int,
        answer: tuple[asyncio.Queue[Prompt], spb.ActionResult] | None = None,
    ) -> pb.Event:
        """Apply one action, trusted: its event to every stream of the match, then a YourTurn
        to the next seat, or MatchEnded after ``match_actions``. ``answer``: Play's result and
        the calling stream's queue, filled before the streams end, as the real server does."""
        if metrics.STAGE_TIMES:
            metrics.begin()
        seq = expected_seq + 1
        event = event_of_action(seat, action, seq)
        if table is None:
            return event
        table.seq = seq
        table.actions += 1
        table.push(event)
        ended = bool(self.match_actions) and table.actions >= self.match_actions
        if ended:
            table.seq += 1
            table.push(pb.Event(seq=table.seq, match_ended=pb.MatchEnded()))
        else:
            table.to_act = (seat + 1) % table.players
            table.push(pb.YourTurn(seq=seq, legal_actions=CANNED_LEGAL), table.to_act)
        if answer is not None:
            queue, result = answer
            queue.put_nowait(result)
        if ended:
            table.push(None)
        if metrics.STAGE_TIMES:
            metrics.lap("handler")
        return event

    async def SubmitAction(  # noqa: N802 - the protocol's name
        self, request: spb.SubmitActionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.SubmitActionResponse:
        table = self.tables.get(request.match_id)
        event = self.act(table, request.seat, request.action, request.expected_seq)
        return spb.SubmitActionResponse(first_seq=event.seq, last_seq=event.seq, events=[event])

    def snapshot(self, table: NoopTable, match_id: str, seat: int) -> pb.Snapshot:
        """A canned snapshot: the seq, whose turn it is, six legal actions if it is ``seat``'s."""
        snapshot = pb.Snapshot(
            match_id=match_id,
            players=table.players,
            viewer_seat=seat,
            seq=table.seq,
            to_act=table.to_act,
        )
        if seat == table.to_act:
            snapshot.legal_actions.extend(CANNED_LEGAL)
        return snapshot

    def open_stream(
        self, match_id: str, seat: int, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tuple[NoopTable, asyncio.Queue[Prompt]] | None:
        """A new queue of ``seat``'s on its table, or None (NOT_FOUND, set on ``context``)."""
        table = self.tables.get(match_id)
        if table is None or seat not in table.queues:
            context.set_code(grpc.StatusCode.NOT_FOUND)
            context.set_details("no such match or seat")
            return None
        queue: asyncio.Queue[Prompt] = asyncio.Queue()
        table.queues[seat].add(queue)
        return table, queue

    def close_stream(
        self, table: NoopTable, match_id: str, seat: int, queue: asyncio.Queue[Prompt]
    ) -> None:
        table.queues[seat].discard(queue)
        if table.seq > 0 and not table.open_streams():
            self.tables.pop(match_id, None)  # the match is over or abandoned

    async def carry(
        self, table: NoopTable, match_id: str, seat: int, queue: asyncio.Queue[Prompt]
    ) -> AsyncIterator[tuple[str, Any]]:
        """What a seat's stream carries, StreamEvents' and Play's alike, each with the response
        field it goes in: the snapshot, then every prompt on ``queue`` until ``None``."""
        yield "snapshot", self.snapshot(table, match_id, seat)
        while (item := await queue.get()) is not None:
            yield PROMPT_FIELDS[type(item)], item

    async def StreamEvents(  # noqa: N802 - the protocol's name
        self, request: spb.StreamEventsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[spb.StreamEventsResponse]:
        opened = self.open_stream(request.match_id, request.seat, context)
        if opened is None:
            return
        table, queue = opened
        try:
            async for field, item in self.carry(table, request.match_id, request.seat, queue):
                yield respond(spb.StreamEventsResponse, field, item)
        finally:
            self.close_stream(table, request.match_id, request.seat, queue)

    async def WatchMatch(  # noqa: N802 - the protocol's name
        self, request: spb.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[spb.WatchMatchResponse]:
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details("the no-op server has no spectators")
        for _ in ():  # an async generator that yields nothing
            yield spb.WatchMatchResponse()

    async def CancelMatch(  # noqa: N802 - the protocol's name
        self, request: spb.CancelMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.CancelMatchResponse:
        self.tables.pop(request.match_id, None)
        return spb.CancelMatchResponse()

    async def Play(  # noqa: N802 - the protocol's name
        self,
        request_iterator: AsyncIterator[spb.PlayRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[spb.PlayResponse]:
        """A seat's events, prompts and action results on one stream: PlayOpen, then actions,
        each applied as SubmitAction applies it and answered with an ActionResult."""
        requests = aiter(request_iterator)
        first = await anext(requests, None)
        if first is None or first.WhichOneof("kind") != "open":
            context.set_code(grpc.StatusCode.INVALID_ARGUMENT)
            context.set_details("send PlayOpen first, then actions")
            return
        opening = first.open
        opened = self.open_stream(opening.match_id, opening.seat, context)
        if opened is None:
            return
        table, queue = opened
        reader = asyncio.create_task(self.play_actions(requests, table, opening.seat, queue))
        try:
            async for field, item in self.carry(table, opening.match_id, opening.seat, queue):
                yield respond(spb.PlayResponse, field, item)
        finally:
            reader.cancel()
            self.close_stream(table, opening.match_id, opening.seat, queue)

    async def play_actions(
        self,
        requests: AsyncIterator[spb.PlayRequest],
        table: NoopTable,
        seat: int,
        queue: asyncio.Queue[Prompt],
    ) -> None:
        """The reader of one Play call: every PlayAction applied, its result on ``queue``."""
        async for request in requests:
            act = request.act
            seq = act.expected_seq + 1
            result = spb.ActionResult(request_id=act.request_id, first_seq=seq, last_seq=seq)
            self.act(table, seat, act.action, act.expected_seq, (queue, result))


def respond(kind: type[R], field: str, item: object) -> R:
    """A stream's response carrying ``item`` in ``field``; its making timed as the real server
    times its own (``send: respond``) when ``CARDARENA_STAGE_TIMES=1``."""
    if not metrics.STAGE_TIMES:
        return kind(**{field: item})
    metrics.begin()
    made = kind(**{field: item})
    metrics.lap("send: respond")
    return made


def timed(step: Callable[[Any], Any], stage: str) -> Callable[[Any], Any]:
    """A request's decoding or a response's serializing, timed as the real server's are."""

    def run(value: Any) -> Any:
        metrics.begin()
        result = step(value)
        metrics.lap(stage)
        return result

    return run


def add_timed(server: grpc.aio.Server, servicer: NoopService) -> None:
    """The generated registration, with each request's decoding and each response's
    serializing timed (``CARDARENA_STAGE_TIMES=1``): the ceiling's share of those stages."""
    service = spb.DESCRIPTOR.services_by_name["MatchService"]
    handlers = {}
    for method in service.methods:
        request = getattr(spb, method.input_type.name, None) or getattr(pb, method.input_type.name)
        answer = getattr(spb, method.output_type.name, None) or getattr(pb, method.output_type.name)
        make = {
            (False, False): grpc.unary_unary_rpc_method_handler,
            (False, True): grpc.unary_stream_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler,
            (True, True): grpc.stream_stream_rpc_method_handler,
        }[(method.client_streaming, method.server_streaming)]
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=timed(request.FromString, "decode"),
            response_serializer=timed(answer.SerializeToString, "send: serialize"),
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )


async def serve_noop(listen: str, match_actions: int) -> None:
    """Run the no-op server until SIGTERM/SIGINT; print the same first line as ``cardarena``.
    With ``CARDARENA_STAGE_TIMES=1`` it times its stages as the real server does and serves
    them on a metrics port of its own, named in a JSON ``listening`` line on stderr."""
    server = grpc.aio.server(options=GRPC_OPTIONS)
    servicer = NoopService(match_actions)
    if metrics.STAGE_TIMES:
        add_timed(server, servicer)
        metrics.watch_idle(asyncio.get_running_loop())
        httpd, _ = start_http_server(0, "127.0.0.1", registry=metrics.REGISTRY)
        print(
            json.dumps({"event": "listening", "metrics_port": httpd.server_port}),
            file=sys.stderr,
            flush=True,
        )
    else:
        service_pb2_grpc.add_MatchServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port(listen)
    if port == 0:
        raise OSError(f"could not listen on {listen}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"noop listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    await stop.wait()
    await server.stop(0)
