"""Calls to a running server, each bounded in time: streams read message by message, seated
matches, the one loop that plays a match out and the one that plays a seat from its stream,
audits of a fetched log, health and reflection, and the Prometheus page."""

from __future__ import annotations

import asyncio
import collections
import http.client
import struct
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from google.protobuf import struct_pb2
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from prometheus_client.parser import text_string_to_metric_families

from cardarena.engine import mix_seed, replay
from cardarena.server.store import StoredEvent, verify_chain
from cardarena.v1 import codec, service_pb2_grpc
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

T = TypeVar("T")

RPC_TIMEOUT = 10.0
"""Every unary call and every stream read gives up after this many seconds."""
STREAM_TIMEOUT = 30.0
"""The deadline of a whole stream."""
LAST = 1 << 62
"""``after_seq`` that asks a stream for its snapshot and live events only."""
SERVICE = "cardarena.v1.MatchService"


def run(scenario: Coroutine[Any, Any, T], seconds: float = 30.0) -> T:
    """Run one test scenario on a fresh event loop, bounded in time."""
    return asyncio.run(asyncio.wait_for(scenario, seconds))


def with_api(
    address: str,
    scenario: Callable[[MatchServiceAsyncStub], Awaitable[T]],
    seconds: float = 30.0,
) -> T:
    """:func:`run` ``scenario`` with a stub of its own on a channel to ``address``, closed
    when it ends: the frame of a test that talks to one server through the MatchService."""

    async def framed() -> T:
        async with grpc.aio.insecure_channel(address) as channel:
            return await scenario(stub(channel))

    return run(framed(), seconds)


async def read_to_end(call: Any) -> list[Any]:
    """Every message of a stream call until it ends (each read bounded by RPC_TIMEOUT)."""
    out: list[Any] = []
    while True:
        message = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
        if message is grpc.aio.EOF:
            return out
        out.append(message)


def prompted(response: spb.PlayResponse) -> tuple[list[pb.Action], int] | None:
    """What a Play message asks the seat to do, ``(legal actions, seq)``: a ``YourTurn``, or a
    snapshot with legal actions (the seat was to act when the call opened); else ``None``."""
    kind = response.WhichOneof("kind")
    if kind == "your_turn":
        return list(response.your_turn.legal_actions), response.your_turn.seq
    if kind == "snapshot" and response.snapshot.legal_actions:
        return list(response.snapshot.legal_actions), response.snapshot.seq
    return None


def stub(channel: grpc.aio.Channel) -> MatchServiceAsyncStub:
    return service_pb2_grpc.MatchServiceStub(channel)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def refused(call: grpc.aio.UnaryStreamCall[Any, Any] | Awaitable[Any]) -> grpc.StatusCode:
    """The status code of a unary call, or of a stream before its second message, that fails."""
    try:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            await asyncio.wait_for(call.read(), RPC_TIMEOUT)
            await asyncio.wait_for(call.read(), RPC_TIMEOUT)
        else:
            await asyncio.wait_for(call, RPC_TIMEOUT)
    except grpc.aio.AioRpcError as error:
        return error.code()
    raise AssertionError("the call succeeded")


# --------------------------------------------------------------------------- metrics


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        body: bytes = response.read()
    return body.decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus page by (name, sorted labels)."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def sample(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


# --------------------------------------------------------------------------- health and reflection


HEALTH_CODEC: dict[str, Any] = {
    "request_serializer": health_pb2.HealthCheckRequest.SerializeToString,
    "response_deserializer": health_pb2.HealthCheckResponse.FromString,
}
"""How both health methods encode their request and decode their answers."""


def health_check(
    channel: grpc.aio.Channel,
) -> grpc.aio.UnaryUnaryMultiCallable[
    health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse
]:
    return channel.unary_unary("/grpc.health.v1.Health/Check", **HEALTH_CODEC)


def health_watch(
    channel: grpc.aio.Channel,
) -> grpc.aio.UnaryStreamMultiCallable[
    health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse
]:
    return channel.unary_stream("/grpc.health.v1.Health/Watch", **HEALTH_CODEC)


async def reflection_services(channel: grpc.aio.Channel) -> list[str]:
    """The services the server's reflection (v1alpha) lists."""
    info = channel.stream_stream(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    call = info(timeout=RPC_TIMEOUT)
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    await call.done_writing()
    names: list[str] = []
    while True:
        message = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
        if not isinstance(message, reflection_pb2.ServerReflectionResponse):
            return names
        assert message.WhichOneof("message_response") == "list_services_response", message
        names.extend(s.name for s in message.list_services_response.service)


# --------------------------------------------------------------------------- streams


class Feed:
    """One StreamEvents or WatchMatch call, read message by message with a timeout.

    ``next`` returns the snapshot or an event, skipping anything else (a seat's YourTurn
    prompts), and ``None`` once the stream has ended normally. A batched stream's message is
    read as the messages it holds, one by one (a spectator's ``more``, a seat's
    ``more_events``).
    """

    def __init__(
        self,
        call: grpc.aio.UnaryStreamCall[Any, spb.StreamEventsResponse]
        | grpc.aio.UnaryStreamCall[Any, spb.WatchMatchResponse],
    ) -> None:
        self.call = call
        self.pending: collections.deque[pb.Event] = collections.deque()

    async def next(self, seconds: float = RPC_TIMEOUT) -> pb.Snapshot | pb.Event | None:
        while not self.pending:
            message = await asyncio.wait_for(self.call.read(), seconds)
            if not isinstance(message, spb.StreamEventsResponse | spb.WatchMatchResponse):
                return None  # grpc.aio.EOF
            if message.WhichOneof("kind") == "snapshot":
                return message.snapshot
            for one in (message, *getattr(message, "more", ())):
                if one.HasField("event"):
                    self.pending.append(one.event)
            self.pending.extend(getattr(message, "more_events", ()))
        return self.pending.popleft()

    async def snapshot(self) -> pb.Snapshot:
        first = await self.next()
        assert isinstance(first, pb.Snapshot), first
        return first

    async def event(self, seconds: float = RPC_TIMEOUT) -> pb.Event:
        item = await self.next(seconds)
        assert isinstance(item, pb.Event), item
        return item

    async def events_through(self, last_seq: int) -> list[pb.Event]:
        """Events up to and including ``last_seq``."""
        out: list[pb.Event] = []
        while not out or out[-1].seq < last_seq:
            out.append(await self.event())
        return out

    async def rest(self) -> list[pb.Event]:
        """Every event until the stream ends normally."""
        out: list[pb.Event] = []
        while (item := await self.next()) is not None:
            assert isinstance(item, pb.Event), item
            out.append(item)
        return out

    def cancel(self) -> None:
        self.call.cancel()


def seat_feed(
    api: MatchServiceAsyncStub, match_id: str, seat: int, token: str, after_seq: int = 0
) -> Feed:
    return Feed(
        api.StreamEvents(
            spb.StreamEventsRequest(match_id=match_id, seat=seat, after_seq=after_seq),
            metadata=auth(token),
            timeout=STREAM_TIMEOUT,
        )
    )


def watch_feed(
    api: MatchServiceAsyncStub, match_id: str, after_seq: int = 0, *, batched: bool = False
) -> Feed:
    """A spectator's stream (``batched``: as the Python client and the web table ask; a match
    has room for only two that do not)."""
    return Feed(
        api.WatchMatch(
            spb.WatchMatchRequest(match_id=match_id, after_seq=after_seq, batched=batched),
            timeout=STREAM_TIMEOUT,
        )
    )


async def snapshot_of(
    api: MatchServiceAsyncStub, match_id: str, seat: int | None = None, token: str = ""
) -> pb.Snapshot:
    """A stream's snapshot; the stream is closed right after."""
    feed = (
        watch_feed(api, match_id, LAST)
        if seat is None
        else seat_feed(api, match_id, seat, token, LAST)
    )
    try:
        return await feed.snapshot()
    finally:
        feed.cancel()


# --------------------------------------------------------------------------- matches


async def create(
    api: MatchServiceAsyncStub,
    game: str,
    players: int,
    *,
    seed: bytes = b"",
    move_ms: int = 0,
    **options: Any,
) -> spb.MatchInfo:
    struct = struct_pb2.Struct()
    struct.update(options)
    created = await api.CreateMatch(
        spb.CreateMatchRequest(
            game=game,
            players=players,
            options=struct,
            seed=seed,
            time_control=spb.TimeControl(move_ms=move_ms),
        ),
        timeout=RPC_TIMEOUT,
    )
    return created.match


async def join_all(api: MatchServiceAsyncStub, match_id: str, players: int) -> list[str]:
    tokens = []
    for seat in range(players):
        joined = await api.JoinMatch(
            spb.JoinMatchRequest(match_id=match_id, seat=seat, name=f"bot{seat}"),
            timeout=RPC_TIMEOUT,
        )
        assert joined.seat == seat
        tokens.append(joined.token)
    return tokens


@dataclass
class Table:
    """A match and its seats' tokens."""

    match_id: str
    tokens: list[str]
    commitment: str = ""


async def new_table(
    api: MatchServiceAsyncStub, game: str = "triathlon", players: int = 3, **kwargs: Any
) -> Table:
    if game == "triathlon" and not kwargs:
        kwargs = {"max_deals": 1}
    info = await create(api, game, players, **kwargs)
    tokens = await join_all(api, info.match_id, players)
    return Table(info.match_id, tokens, info.seed_commitment)


async def act(api: MatchServiceAsyncStub, table: Table) -> spb.SubmitActionResponse | None:
    """The lowest legal action of whoever is to act; ``None`` if the match is over."""
    spectator = await snapshot_of(api, table.match_id)
    if spectator.over:
        return None
    seat = spectator.to_act
    snap = await snapshot_of(api, table.match_id, seat, table.tokens[seat])
    return await api.SubmitAction(
        spb.SubmitActionRequest(
            match_id=table.match_id,
            seat=seat,
            action=snap.legal_actions[0],
            expected_seq=snap.seq,
            request_id=f"act-{snap.seq}",
        ),
        metadata=auth(table.tokens[seat]),
        timeout=RPC_TIMEOUT,
    )


async def act_times(api: MatchServiceAsyncStub, table: Table, count: int) -> int:
    """Act ``count`` times (fewer if the match ends); return the last seq written."""
    last = 0
    for _ in range(count):
        done = await act(api, table)
        if done is None:
            break
        last = done.last_seq
    return last


async def play_out(api: MatchServiceAsyncStub, table: Table, max_actions: int = 5000) -> int:
    """Play the lowest legal actions to the end; return how many actions it took."""
    for count in range(max_actions):
        if await act(api, table) is None:
            return count
    raise AssertionError(f"match {table.match_id} did not end in {max_actions} actions")


async def seat_player(
    api: MatchServiceAsyncStub,
    match_id: str,
    seat: int,
    token: str,
    *,
    after_seq: int = LAST,
    acknowledged: dict[str, int] | None = None,
    timeout: float | None = STREAM_TIMEOUT,
) -> int:
    """Play one seat from its own stream until the match ends; return its actions.

    Acts on the stream's snapshot and on every YourTurn prompt, with the lowest legal action;
    a stale prompt (ABORTED) is skipped since a newer one follows. Records the highest seq
    acknowledged per match in ``acknowledged``, if given. ``timeout`` bounds the whole stream
    (``None``: only each read is bounded).
    """
    call = api.StreamEvents(
        spb.StreamEventsRequest(match_id=match_id, seat=seat, after_seq=after_seq),
        metadata=auth(token),
        timeout=timeout,
    )
    acted = 0
    while True:
        message = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
        if not isinstance(message, spb.StreamEventsResponse):
            return acted
        kind = message.WhichOneof("kind")
        if kind == "snapshot" and message.snapshot.over:
            return acted
        turn: tuple[int, Sequence[pb.Action]] | None = None
        if kind == "your_turn":
            turn = (message.your_turn.seq, message.your_turn.legal_actions)
        elif kind == "snapshot" and message.snapshot.legal_actions:
            turn = (message.snapshot.seq, message.snapshot.legal_actions)
        if turn is None:
            continue
        seq, legal = turn
        try:
            done = await api.SubmitAction(
                spb.SubmitActionRequest(
                    match_id=match_id,
                    seat=seat,
                    action=legal[0],
                    expected_seq=seq,
                    request_id=f"s{seat}q{seq}",
                ),
                metadata=auth(token),
                timeout=RPC_TIMEOUT,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.ABORTED:
                continue  # a newer YourTurn is on its way
            raise
        acted += 1
        if acknowledged is not None:
            acknowledged[match_id] = max(acknowledged.get(match_id, 0), done.last_seq)


def audit(log: spb.GetMatchLogResponse) -> None:
    """The chain verifies and the engine replays the log with the revealed seed, mixed with
    the seats' contributions."""
    match_id = log.match.match_id
    stored = [StoredEvent(match_id, e.seq, e.event, e.hash) for e in log.entries]
    assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
    assert verify_chain(match_id, stored) is None
    entries = [pb.Event.FromString(e.event) for e in log.entries]
    given: list[bytes | None] = [None] * log.match.players
    for entry in entries:
        if entry.WhichOneof("kind") == "seat_joined" and entry.seat_joined.contribution:
            given[entry.seat_joined.seat] = entry.seat_joined.contribution
    events = [codec.event_from_pb(e) for e in entries]
    match = replay(
        [e for e in events if e is not None],
        seed=log.seed,
        deal_seed=mix_seed(log.seed, given),
    )
    assert match.over


def action_of_event(event: pb.Event) -> tuple[int, pb.Action] | None:
    """The seat and the action an event records, if it records one."""
    kind = event.WhichOneof("kind")
    if kind == "card_played":
        return event.card_played.seat, pb.Action(
            play=pb.Card(suit=event.card_played.card.suit, rank=event.card_played.card.rank)
        )
    if kind == "passed":
        passed = pb.Action()
        getattr(passed, "pass").SetInParent()  # `pass` is a Python keyword
        return event.passed.seat, passed
    if kind == "suit_excluded":
        return event.suit_excluded.seat, pb.Action(exclude_suit=event.suit_excluded.suit)
    if kind == "trump_chosen":
        return event.trump_chosen.seat, pb.Action(choose_trump=event.trump_chosen.suit)
    return None


def same_action(a: pb.Action, b: pb.Action) -> bool:
    """Equal as actions: the card code is informative only."""
    kind = a.WhichOneof("kind")
    if kind != b.WhichOneof("kind"):
        return False
    if kind == "play":
        return (a.play.suit, a.play.rank) == (b.play.suit, b.play.rank)
    return a == b


def grpc_web(
    port: int, method: str, message: Message, headers: dict[str, str] | None = None
) -> tuple[int, str, list[bytes]]:
    """One gRPC-Web call through the gateway, as a browser makes it: its grpc-status, its
    grpc-message and the messages it carried."""
    payload = message.SerializeToString()
    body = struct.pack(">BI", 0, len(payload)) + payload
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=RPC_TIMEOUT)
    try:
        connection.request(
            "POST",
            f"/{SERVICE}/{method}",
            body,
            {"content-type": "application/grpc-web+proto", **(headers or {})},
        )
        data = connection.getresponse().read()
    finally:
        connection.close()
    messages: list[bytes] = []
    trailers: dict[str, str] = {}
    while data:
        flags, length = struct.unpack(">BI", data[:5])
        frame, data = data[5 : 5 + length], data[5 + length :]
        if flags & 0x80:
            for line in frame.decode().split("\r\n"):
                if line:
                    name, value = line.split(":", 1)
                    trailers[name.strip()] = value.strip()
        else:
            messages.append(frame)
    status = int(trailers["grpc-status"])
    return status, urllib.parse.unquote(trailers.get("grpc-message", "")), messages
