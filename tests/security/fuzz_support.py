"""What the fuzzer of ``test_fuzz`` sends, what it knows of the live server, and what it checks
of every answer: the requests and answers, the methods, sending a request (unary or stream)
under a deadline, and the checks that nothing leaked and nothing changed.
"""

from __future__ import annotations

import asyncio
import base64
import re
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError, Message

from cardarena.engine import card_code
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import LAST, auth
from .support import Table, raw_unary

CALL_TIMEOUT = 5.0
FIRST_ANSWER = 2.0
"""How long a stream may take to send its next message (the server answers in
milliseconds; a stream that is open and quiet is cancelled after this)."""
METHODS: tuple[MethodDescriptor, ...] = (
    *spb.DESCRIPTOR.services_by_name["MatchService"].methods,
    *tpb.DESCRIPTOR.services_by_name["TournamentService"].methods,
)
MUTATING = frozenset(
    {
        "CreateMatch",
        "JoinMatch",
        "SubmitAction",
        "Play",
        "CancelMatch",
        "CreateTournament",
        "CancelTournament",
    }
)
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|1[12]|[1-9JQKA])[CDHSOEB](?![0-9A-Za-z])")
"""Card codes of either deck as RULES.md writes them (``QC``, ``10H``, ``6O``, ``12B``)."""
CLIENT_SIDE = (grpc.StatusCode.INTERNAL, "Internal error from Core")
RULE_CARDS = frozenset({"7H", "6O"})
"""Named by the rules themselves ("Fan Tan opens with 7H"), whoever holds them."""


def request_class(method: MethodDescriptor) -> Any:
    """The request message class of ``method``, of either service."""
    module = tpb if method.containing_service.name == "TournamentService" else spb
    return getattr(module, method.input_type.name)


@dataclass
class Tourney:
    """The live tournament: its id, its entrants' keys and creator secret, its seed, the
    seat tokens its entrants were given, and its matches' states (which must not change)."""

    tournament_id: str = ""
    keys: list[str] = field(default_factory=list)
    creator: str = ""
    seed: bytes = b""
    tokens: list[str] = field(default_factory=list)
    matches: dict[str, tuple[Any, ...]] = field(default_factory=dict)


@dataclass
class Live:
    """The matches the fuzzer aims at, and everything that must never leak."""

    operator: str
    tables: dict[str, Table] = field(default_factory=dict)
    creators: dict[str, str] = field(default_factory=dict)
    join_secrets: list[str] = field(default_factory=list)
    state: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    hands: dict[str, list[set[str]]] = field(default_factory=dict)
    """Each seat's cards (as codes) in each match that is not over."""
    ended: set[str] = field(default_factory=set)
    turns: dict[str, tuple[int, int, list[pb.Action]]] = field(default_factory=dict)
    """Whose turn it is in each running match: ``(seat, seq, legal actions)``."""
    tourney: Tourney = field(default_factory=Tourney)

    def secrets(self) -> list[str]:
        out = [self.operator, *self.creators.values(), *self.join_secrets]
        tourney = self.tourney
        out += [*tourney.keys, tourney.creator, *tourney.tokens, *forms(tourney.seed)]
        for table in self.tables.values():
            out += table.tokens
            if table.match_id not in self.ended:
                out += forms(table.seed)
        return out

    def tokens(self) -> list[tuple[str, int, str]]:
        return [
            (t.match_id, s, tok) for t in self.tables.values() for s, tok in enumerate(t.tokens)
        ]


def forms(seed: bytes) -> list[str]:
    """How a seed could be written in a message."""
    if not seed:
        return []
    return [
        seed.hex(),
        base64.b64encode(seed).decode(),
        base64.urlsafe_b64encode(seed).decode().rstrip("="),
        repr(seed)[2:-1],
    ]


@dataclass
class Sent:
    """One fuzzed request: the method, the bytes, the metadata."""

    method: MethodDescriptor
    payloads: list[bytes]
    metadata: tuple[tuple[str, str], ...]


@dataclass
class Answer:
    code: grpc.StatusCode
    messages: list[str]
    """The status details and every in-stream ActionResult message."""
    accepted: bool
    """Some part of it was applied (an OK unary call, an ActionResult with code 0)."""


# --------------------------------------------------------------------------- sending


async def send(channel: grpc.aio.Channel, sent: Sent) -> Answer:
    method = sent.method
    service = method.containing_service.full_name
    path = f"/{service}/{method.name}"
    if not method.client_streaming and not method.server_streaming:
        code, details, _ = await raw_unary(
            channel,
            method.name,
            sent.payloads[0],
            metadata=sent.metadata,
            timeout=CALL_TIMEOUT,
            service=service,
        )
        return Answer(code, [details], code == grpc.StatusCode.OK)
    call: Any
    cut_short = False
    if method.client_streaming:
        bidi: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(path)
        call = bidi(metadata=sent.metadata, timeout=CALL_TIMEOUT)
        try:
            for payload in sent.payloads:
                await call.write(payload)
            await call.done_writing()
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            cut_short = True  # the server ended the call before it had read everything
    else:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(path)
        call = stream(sent.payloads[0], metadata=sent.metadata, timeout=CALL_TIMEOUT)
    messages: list[str] = []
    accepted = False
    results = 0
    wanted = len(sent.payloads) - 1  # Play: one result per message after the opening
    try:
        while True:
            reply = await asyncio.wait_for(call.read(), FIRST_ANSWER)
            if reply is grpc.aio.EOF:
                break
            if method.name != "Play":
                break  # a snapshot: the stream was opened; nothing else can go wrong here
            response = spb.PlayResponse.FromString(reply)
            if response.WhichOneof("kind") == "result":
                messages.append(response.result.message)
                accepted |= response.result.code == 0
                results += 1
                if results >= wanted:
                    break
    except TimeoutError:  # an open stream that went quiet: whatever it did is unknown
        call.cancel()
        return Answer(grpc.StatusCode.OK, messages, accepted or method.name == "Play")
    except grpc.aio.AioRpcError as error:
        # A call that ended before every action's result was read may have applied one of
        # them: grpc's client raises a finished call's status on the next read, before any
        # answer still waiting to be read (grpc/aio/_call.py, read), so a legal action ahead
        # of an undecodable message is applied and its result never seen.
        accepted |= method.name == "Play" and results < wanted
        if cut_short and (error.code(), error.details()) == CLIENT_SIDE:
            # grpc's client replaces the server's status by its own when a write finds the
            # call closed (grpc/aio/_call.py, set_internal_error): not the server's answer.
            # An INTERNAL of the server would still be in its log, checked at the end.
            return Answer(grpc.StatusCode.CANCELLED, messages, accepted)
        return Answer(error.code(), [*messages, error.details() or ""], accepted)
    call.cancel()
    return Answer(grpc.StatusCode.OK, messages, accepted)


# --------------------------------------------------------------------------- checking


def echoed(sent: Sent) -> list[str]:
    """Every string the request carried (its own text may come back in an error)."""
    out: list[str] = []
    cls = request_class(sent.method)
    for payload in sent.payloads:
        try:
            message = cls.FromString(payload)
        except DecodeError:
            out += re.findall(r"[\x20-\x7e]{2,}", payload.decode("latin-1"))
            continue
        out += strings_of(message)
    return out


def strings_of(message: Message) -> list[str]:
    out: list[str] = []
    for f, value in message.ListFields():
        values = value if f.is_repeated else [value]
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            out += list(value.keys())
            values = list(value.values())
        for item in values:
            if isinstance(item, Message):
                out += strings_of(item)
                if isinstance(item, pb.Card):
                    out.append(card_code_of(item))
            elif isinstance(item, str):
                out.append(item)
    return out


def card_code_of(card: pb.Card) -> str:
    try:
        return card_code(codec.card_from_pb(card))
    except ValueError:
        return ""


def caller_seat(live: Live, metadata: tuple[tuple[str, str], ...]) -> tuple[str, int] | None:
    for key, value in metadata:
        if key == "authorization":
            for match_id, seat, token in live.tokens():
                if value == f"Bearer {token}":
                    return match_id, seat
    return None


def leaks(live: Live, sent: Sent, answer: Answer) -> list[str]:
    """Secrets and other seats' hidden cards in what the server said."""
    own = echoed(sent)
    found = []
    caller = caller_seat(live, sent.metadata)
    visible = set(RULE_CARDS) | {s for s in own if CARD.fullmatch(s)}
    if caller is not None and caller[0] in live.hands:
        visible |= live.hands[caller[0]][caller[1]]
    hidden = set().union(*(set().union(*h) for h in live.hands.values())) - visible
    for message in answer.messages:
        text = message
        for echo in sorted((s for s in own if len(s) >= 2), key=len, reverse=True):
            for form in (repr(echo), echo, repr(echo)[1:-1]):
                text = text.replace(form, "")
        found += [f"secret in {message!r}" for s in live.secrets() if s and s in text]
        found += [f"card {c} in {message!r}" for c in CARD.findall(text) if c in hidden]
    return found


async def refresh(api: Any, live: Live) -> None:
    """Read every live match's state and hands afresh (after an accepted request)."""
    for match_id, table in live.tables.items():
        info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=5)).match
        live.state[match_id] = state_of(info)
        if info.status == spb.MATCH_STATUS_ENDED:
            live.ended.add(match_id)
            live.hands.pop(match_id, None)
            live.turns.pop(match_id, None)
        elif table.tokens:
            live.hands[match_id] = [await hand_of(api, table, s) for s in range(table.players)]
            live.turns[match_id] = await turn(api, table)


def state_of(info: spb.MatchInfo) -> tuple[Any, ...]:
    return (
        info.last_seq,
        bytes(info.last_hash),
        info.status,
        info.cancelled,
        tuple((s.taken, s.name) for s in info.seats),
    )


async def seat_snapshot(api: Any, table: Table, seat: int) -> pb.Snapshot:
    """What ``seat`` of ``table`` is shown now (a stream's snapshot; the stream is closed)."""
    call = api.StreamEvents(
        spb.StreamEventsRequest(match_id=table.match_id, seat=seat, after_seq=LAST),
        metadata=auth(table.tokens[seat]),
        timeout=5,
    )
    try:
        snapshot: pb.Snapshot = (await asyncio.wait_for(call.read(), 5)).snapshot
    finally:
        call.cancel()
    return snapshot


async def hand_of(api: Any, table: Table, seat: int) -> set[str]:
    snapshot = await seat_snapshot(api, table, seat)
    return {card_code_of(c) for c in snapshot.hands[seat].cards}


def targets(sent: Sent) -> set[str]:
    """The matches a request names (those it may change if it is accepted)."""
    out = set()
    cls = request_class(sent.method)
    for payload in sent.payloads:
        try:
            message = cls.FromString(payload)
        except DecodeError:
            continue
        if isinstance(message, spb.PlayRequest):
            out.add(message.open.match_id)
        elif "match_id" in message.DESCRIPTOR.fields_by_name:
            out.add(message.match_id)
    return out


async def unchanged(
    api: Any, live: Live, window: list[Sent], but: frozenset[str] | set[str] = frozenset()
) -> None:
    """No match changed since the last look, but those in ``but``; the tournament's, never."""
    for match_id, state in live.tourney.matches.items():  # (held back: the operator reads it)
        asked = spb.GetMatchRequest(match_id=match_id)
        info = (await api.GetMatch(asked, metadata=auth(live.operator), timeout=5)).match
        assert state_of(info) == state, f"tournament match {match_id} changed: " + ", ".join(
            f"{s.method.name}{s.payloads!r}"[:300] for s in window
        )
    for match_id in set(live.tables) - but:
        info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=5)).match
        assert state_of(info) == live.state[match_id], (
            f"match {match_id} changed under refused requests: "
            + ", ".join(
                f"{s.method.name}{s.payloads!r}"[:300] for s in window if s.method.name in MUTATING
            )
        )


async def turn(api: Any, table: Table) -> tuple[int, int, list[pb.Action]]:
    for seat in range(table.players):
        snapshot = await seat_snapshot(api, table, seat)
        if snapshot.legal_actions:
            return seat, snapshot.seq, list(snapshot.legal_actions)
    raise AssertionError("nobody is to act")
