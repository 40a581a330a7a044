"""Fuzzing every RPC of a real server with live matches (issue 10, "what done looks like").

At least 5,000 requests, from a fixed seed, over every method of MatchService and of
TournamentService (aimed at a live tournament whose entrants stay connected): messages
built at random from the protobuf descriptors (field values drawn from the real match ids,
seats and secrets as well as from edge cases), serialized valid requests with bits flipped,
bytes cut, inserted or repeated, plain random bytes, and random credentials in the metadata.
Asserted throughout:

* no answer is UNKNOWN or INTERNAL (or DEADLINE_EXCEEDED: the server always answers);
* no secret (a seat token, the operator token, a creator or join secret, the seed of a match
  that has not ended) and no card of another seat's hidden hand is in any error message or
  in-stream ActionResult (whatever the request itself carried is taken out first);
* a refused request changes nothing: every live match's last seq, last hash, seats and
  status are what they were after the last request that was accepted; the tournament's
  matches never change (no request may touch them), and it is never cancelled;

and at the end: the process is alive, health says SERVING, a normal match is played to its
end and audits clean, the log has no ERROR line and no secret, and SIGTERM exits 0.
Bounded by count (``REQUESTS``) and by a wall-clock cap (``CAP_SECONDS``).
"""

from __future__ import annotations

import asyncio
import base64
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health_pb2

from cardarena.clients.audit import audit_log
from cardarena.engine import card_code
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import LAST, auth, health_check
from ..serverproc import ServerProcess, log_records
from .support import (
    Table,
    channel_to,
    create_table,
    play_out_over_play,
    raw_unary,
    secret,
)
from .tournaments import LONG_MOVE, Entry, create_request, enter, tstub

REQUESTS = 5000
CAP_SECONDS = 40.0
SEED = 20261201
CALL_TIMEOUT = 5.0
FIRST_ANSWER = 2.0
"""How long a stream may take to send its next message (the server answers in
milliseconds; a stream that is open and quiet is cancelled after this)."""
CHECK_EVERY = 25
"""Requests between two checks that nothing changed."""
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
CREATING = frozenset({"CreateMatch", "CreateTournament"})
FORBIDDEN = frozenset(
    {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DEADLINE_EXCEEDED}
)
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|1[12]|[1-9JQKA])[CDHSOEB](?![0-9A-Za-z])")
"""Card codes of either deck as RULES.md writes them (``QC``, ``10H``, ``6O``, ``12B``)."""
DEPTH = {
    "OK",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "UNAUTHENTICATED",
    "PERMISSION_DENIED",
    "FAILED_PRECONDITION",
    "ALREADY_EXISTS",
}
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


# --------------------------------------------------------------------------- generating


class Fuzzer:
    def __init__(self, rng: random.Random, live: Live) -> None:
        self.rng = rng
        self.live = live

    # values -------------------------------------------------------------------------------

    def text(self) -> str:
        rng = self.rng
        kind = rng.randrange(9)
        if kind == 0:
            return ""
        if kind == 1:
            if rng.random() < 0.3:
                return self.live.tourney.tournament_id
            return rng.choice(list(self.live.tables))
        if kind == 2:
            return secret()
        if kind == 3:
            return "".join(rng.choice("abc 01\x00\x1b\x7f\u00e9\u4e2d\U0001f0a1") for _ in range(8))
        if kind == 4:
            return "x" * rng.choice((63, 64, 65, 128, 129, 201, 5000))
        if kind == 5:
            return rng.choice(("triathlon", "heptathlon", "crazy_sixes", "nope", "TRIATHLON"))
        if kind == 6:
            return rng.choice(list(self.live.tables))[: rng.randrange(16)] + "'\""
        return "".join(chr(rng.randrange(0x21, 0x7F)) for _ in range(rng.randrange(1, 40)))

    def integer(self, bits: int, signed: bool) -> int:
        rng = self.rng
        top = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        low = -(1 << (bits - 1)) if signed else 0
        value = rng.choice((0, 1, 2, 3, 4, 5, 7, 13, 55, 64, 111, 1000, top, top - 1, low))
        if rng.random() < 0.3:
            value = rng.randint(low, top)
        return max(low, min(top, value))

    def scalar(self, f: Any) -> Any:
        rng = self.rng
        t = f.type
        if t == FieldDescriptor.TYPE_STRING:
            return self.text()
        if t == FieldDescriptor.TYPE_BYTES:
            return rng.randbytes(rng.choice((0, 1, 31, 32, 33, rng.randrange(100))))
        if t == FieldDescriptor.TYPE_BOOL:
            return rng.random() < 0.5
        if t == FieldDescriptor.TYPE_ENUM:
            assert f.enum_type is not None
            numbers = [v.number for v in f.enum_type.values]
            return rng.choice([*numbers, max(numbers) + 1, 99, -1])
        if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return rng.choice((0.0, -1.0, 0.5, 1e300, float("inf"), float("nan"), 3.0))
        signed = t in (
            FieldDescriptor.TYPE_INT32,
            FieldDescriptor.TYPE_INT64,
            FieldDescriptor.TYPE_SINT32,
            FieldDescriptor.TYPE_SINT64,
            FieldDescriptor.TYPE_SFIXED32,
            FieldDescriptor.TYPE_SFIXED64,
        )
        bits = (
            64
            if t
            in (
                FieldDescriptor.TYPE_INT64,
                FieldDescriptor.TYPE_UINT64,
                FieldDescriptor.TYPE_SINT64,
                FieldDescriptor.TYPE_FIXED64,
                FieldDescriptor.TYPE_SFIXED64,
            )
            else 32
        )
        if f.name in ("expected_seq", "after_seq") and rng.random() < 0.5:
            return rng.choice([s[0] for s in self.live.state.values()]) + rng.randrange(-1, 2)
        return self.integer(bits, signed)

    def fill(self, message: Message, depth: int = 0) -> Message:
        """Set a random subset of ``message``'s fields to random values, recursively."""
        rng = self.rng
        for f in message.DESCRIPTOR.fields:
            if rng.random() < 0.35:
                continue
            value_of = getattr(message, f.name)
            if f.message_type is not None and f.message_type.GetOptions().map_entry:
                value_field = f.message_type.fields_by_name["value"]
                for _ in range(rng.randrange(4) if depth < 4 else 0):
                    key = self.text()
                    if value_field.message_type is not None:
                        self.fill(value_of[key], depth + 1)
                    else:
                        value_of[key] = self.scalar(value_field)
            elif f.is_repeated:
                for _ in range(rng.randrange(4) if depth < 4 else 0):
                    if f.message_type is not None:
                        self.fill(value_of.add(), depth + 1)
                    else:
                        value_of.append(self.scalar(f))
            elif f.message_type is not None:
                if depth < 4:
                    value_of.SetInParent()
                    self.fill(value_of, depth + 1)
            else:
                try:
                    setattr(message, f.name, self.scalar(f))
                except (ValueError, TypeError):  # e.g. NaN where the type refuses it
                    continue
        return message

    # requests -----------------------------------------------------------------------------

    def valid(self, method: MethodDescriptor, table: Table | None = None) -> Message:
        """A plausible request of ``method`` about a live match (``table``, or any)."""
        rng = self.rng
        table = table or rng.choice(list(self.live.tables.values()))
        seat = rng.randrange(table.players)
        last = self.live.state[table.match_id][0]
        action = codec.action_to_pb(rng.randrange(56))
        name = method.name
        tid = self.live.tourney.tournament_id
        if name == "CreateTournament":
            return create_request(
                ("fa", "fb", "fc"), deals=1, concurrency=1, request_id=f"fzt{rng.randrange(10)}"
            )
        if name == "GetTournament":
            return tpb.GetTournamentRequest(tournament_id=tid, include_matches=rng.random() < 0.5)
        if name == "ListTournaments":
            return tpb.ListTournamentsRequest(page_size=rng.randrange(3))
        if name == "CancelTournament":
            return tpb.CancelTournamentRequest(tournament_id=tid, reason="fz")
        if name == "WatchTournament":
            return tpb.WatchTournamentRequest(tournament_id=tid)
        if name == "Enter":
            return tpb.EnterRequest(tournament_id=tid)
        if name == "CreateMatch":
            return spb.CreateMatchRequest(
                game="triathlon", players=3, request_id=f"fz{rng.randrange(50)}"
            )
        if name == "JoinMatch":
            return spb.JoinMatchRequest(match_id=table.match_id, seat=seat, name="fz")
        turn = self.live.turns.get(table.match_id)
        if turn is not None and rng.random() < 0.4:  # the real move (or a near miss)
            seat, last = turn[0], turn[1] - rng.choice((0, 0, 0, 1))
            action = rng.choice(turn[2])
        if name == "SubmitAction":
            return spb.SubmitActionRequest(
                match_id=table.match_id,
                seat=seat,
                action=action,
                expected_seq=last,
                request_id=f"fz-{rng.randrange(1000)}",
            )
        if name == "StreamEvents":
            return spb.StreamEventsRequest(match_id=table.match_id, seat=seat, after_seq=last)
        if name == "WatchMatch":
            return spb.WatchMatchRequest(match_id=table.match_id, after_seq=last)
        if name == "ListMatches":
            listing = spb.ListMatchesRequest(page_size=rng.randrange(3))
            listing.status = rng.choice(list(spb.MatchStatus.values()))
            return listing
        if name == "CancelMatch":
            return spb.CancelMatchRequest(match_id=table.match_id, reason="fz")
        if name == "Play":
            return spb.PlayRequest(act=spb.PlayAction(action=action, expected_seq=last))
        request = request_class(method)()
        if "match_id" in request.DESCRIPTOR.fields_by_name:
            request.match_id = table.match_id
        message: Message = request
        return message

    def mutate(self, data: bytes) -> bytes:
        rng = self.rng
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            op = rng.randrange(6)
            if op == 0 and out:
                i = rng.randrange(len(out))
                out[i] ^= 1 << rng.randrange(8)
            elif op == 1 and out:
                out[rng.randrange(len(out))] = rng.randrange(256)
            elif op == 2:
                out.insert(rng.randrange(len(out) + 1), rng.randrange(256))
            elif op == 3 and out:
                del out[rng.randrange(len(out))]
            elif op == 4 and out:
                del out[rng.randrange(len(out)) :]
            elif out:
                i = rng.randrange(len(out))
                out[i:i] = out[i : i + rng.randrange(1, 8)]
        return bytes(out)

    def payload(self, method: MethodDescriptor, table: Table | None = None) -> bytes:
        rng = self.rng
        how = rng.random()
        if how < 0.35:
            return bytes(self.fill(request_class(method)()).SerializeToString())
        if how < 0.75:
            return self.mutate(self.valid(method, table).SerializeToString())
        if how < 0.9:
            return bytes(self.valid(method, table).SerializeToString())
        return rng.randbytes(rng.randrange(65))

    def metadata(self, method: MethodDescriptor) -> tuple[tuple[str, str], ...]:
        rng = self.rng
        kind = rng.randrange(8)
        if kind == 0:
            return ()
        if kind in (1, 2):
            _, _, token = rng.choice(self.live.tokens())
            return auth(token)
        cancelling = method.name in ("CancelMatch", "CancelTournament")
        if kind == 3 and not cancelling:  # cancelling a live match or tournament is allowed
            return auth(self.live.operator)
        if kind == 4 and rng.random() < 0.5:  # an entrant's key, or (not to cancel) the creator's
            tourney = self.live.tourney
            if cancelling or rng.random() < 0.7:
                return auth(rng.choice(tourney.keys))
            return auth(tourney.creator)
        if kind == 4:
            return (("authorization", rng.choice(("Bearer", "Bearer ", "bearer " + secret()))),)
        if kind == 5:
            return (("authorization", secret()),)
        if kind == 6:
            return (
                (
                    "authorization",
                    "Bearer "
                    + "".join(chr(rng.randrange(0x20, 0x7F)) for _ in range(rng.randrange(300))),
                ),
                ("x-fuzz", "1"),
            )
        return auth(secret())

    def play_payloads(self) -> tuple[list[bytes], tuple[tuple[str, str], ...]]:
        """A Play call: often a real seat's valid opening, then fuzzed messages."""
        rng = self.rng
        play = next(m for m in METHODS if m.name == "Play")
        payloads: list[bytes] = []
        metadata = self.metadata(play)
        table = None
        if rng.random() < 0.6:
            match_id, seat, token = rng.choice(self.live.tokens())
            turn = self.live.turns.get(match_id)
            if turn is not None and rng.random() < 0.5:  # the seat to act
                seat, token = turn[0], self.live.tables[match_id].tokens[turn[0]]
            table = self.live.tables[match_id]
            metadata = auth(token)
            after = rng.choice((0, LAST, self.live.state[match_id][0]))
            opening = spb.PlayRequest(
                open=spb.PlayOpen(match_id=match_id, seat=seat, after_seq=after)
            )
            payloads.append(opening.SerializeToString())
        payloads += [self.payload(play, table) for _ in range(rng.randint(1, 4))]
        return payloads, metadata

    def next(self, index: int) -> Sent:
        method = METHODS[index % len(METHODS)] if index < 4 * len(METHODS) else None
        method = method or self.rng.choice(METHODS)
        if method.name == "Play":
            payloads, metadata = self.play_payloads()
            return Sent(method, payloads, metadata)
        payload = self.payload(method)
        metadata = self.metadata(method)
        if method.name in ("SubmitAction", "StreamEvents") and self.rng.random() < 0.5:
            metadata = self.token_for(method, payload) or metadata
        return Sent(method, [payload], metadata)

    def token_for(
        self, method: MethodDescriptor, payload: bytes
    ) -> tuple[tuple[str, str], ...] | None:
        """The credential of the seat the request names, if it names a real one."""
        try:
            request = request_class(method).FromString(payload)
        except DecodeError:
            return None
        for match_id, seat, token in self.live.tokens():
            if (match_id, seat) == (request.match_id, request.seat):
                return auth(token)
        return None


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


async def hand_of(api: Any, table: Table, seat: int) -> set[str]:
    call = api.StreamEvents(
        spb.StreamEventsRequest(match_id=table.match_id, seat=seat, after_seq=LAST),
        metadata=auth(table.tokens[seat]),
        timeout=5,
    )
    try:
        snapshot = (await asyncio.wait_for(call.read(), 5)).snapshot
    finally:
        call.cancel()
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
    for match_id, state in live.tourney.matches.items():
        info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=5)).match
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


# --------------------------------------------------------------------------- the test


async def setup_tournament(channel: grpc.aio.Channel, api: Any, live: Live) -> list[Entry]:
    """A running tournament (three matches, no clock to speak of) whose every entrant stays
    connected throughout: the fuzzer's own Enter calls, with real keys, then never leave an
    entrant disconnected (which would log faults, as it should)."""
    tapi = tstub(channel)
    tourney = live.tourney
    tourney.keys = [secret() for _ in range(3)]
    tourney.creator = secret()
    created = await tapi.CreateTournament(
        create_request(keys=tourney.keys, creator_secret=tourney.creator, move_ms=LONG_MOVE),
        metadata=auth(live.operator),
        timeout=5,
    )
    tourney.tournament_id = created.tournament.tournament_id
    entries = [enter(tapi, tourney.tournament_id, key) for key in tourney.keys]
    for entry in entries:
        tourney.tokens += [m.token for m in await entry.until_matches(3)]
        tourney.matches.update({m.match_id: () for m in entry.seats()})
    for match_id in tourney.matches:
        info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=5)).match
        tourney.matches[match_id] = state_of(info)
    return entries


async def setup(api: Any, address: str, live: Live) -> None:
    """Two running matches a few moves in, one waiting on reserved seats, one ended."""
    operator = auth(live.operator)
    creators = [secret() for _ in range(3)]
    running = [
        await create_table(api, metadata=operator, creator_secret=creators[0]),
        await create_table(api, "heptathlon", 4, metadata=operator, creator_secret=creators[1]),
    ]
    reserved = {s: secret() for s in range(3)}
    waiting = await create_table(
        api, metadata=operator, reserved=reserved, seat_all=False, creator_secret=creators[2]
    )
    finished = await create_table(api, metadata=operator)
    await play_out_over_play(address, finished)
    live.join_secrets += reserved.values()
    for table, creator in zip((*running, waiting), creators, strict=True):
        live.creators[table.match_id] = creator
    for table in (*running, waiting, finished):
        live.tables[table.match_id] = table
    for table in running:
        for _ in range(3):  # a few moves, so the hands differ from the deal
            seat, seq, legal = await turn(api, table)
            await api.SubmitAction(
                spb.SubmitActionRequest(
                    match_id=table.match_id, seat=seat, action=legal[0], expected_seq=seq
                ),
                metadata=auth(table.tokens[seat]),
                timeout=5,
            )
    await refresh(api, live)


async def turn(api: Any, table: Table) -> tuple[int, int, list[pb.Action]]:
    for seat in range(table.players):
        call = api.StreamEvents(
            spb.StreamEventsRequest(match_id=table.match_id, seat=seat, after_seq=LAST),
            metadata=auth(table.tokens[seat]),
            timeout=5,
        )
        try:
            snapshot = (await asyncio.wait_for(call.read(), 5)).snapshot
        finally:
            call.cancel()
        if snapshot.legal_actions:
            return seat, snapshot.seq, list(snapshot.legal_actions)
    raise AssertionError("nobody is to act")


def test_fuzzing_every_rpc_breaks_nothing_and_leaks_nothing(data_dir: Path) -> None:
    live = Live(operator=secret())
    extra = ["--admin-token", live.operator, "--create-rate", "0", "--join-rate", "0"]
    counts: dict[str, int] = {}
    codes: dict[str, int] = {}

    async def scenario(address: str) -> int:
        async with channel_to(address) as (channel, api):
            await setup(api, address, live)
            entries = await setup_tournament(channel, api, live)
            fuzzer = Fuzzer(random.Random(SEED), live)
            started = time.monotonic()
            window: list[Sent] = []
            sent_count = 0
            while sent_count < REQUESTS and time.monotonic() - started < CAP_SECONDS:
                sent = fuzzer.next(sent_count)
                answer = await send(channel, sent)
                sent_count += 1
                window.append(sent)
                counts[sent.method.name] = counts.get(sent.method.name, 0) + 1
                codes[answer.code.name] = codes.get(answer.code.name, 0) + 1
                assert answer.code not in FORBIDDEN, (sent, answer)
                assert not leaks(live, sent, answer), (sent, leaks(live, sent, answer))
                assert not (answer.accepted and sent.method.name == "CancelTournament"), sent
                if answer.accepted and sent.method.name in MUTATING - CREATING:
                    # Only the match it names may have changed; then look at all afresh.
                    await unchanged(api, live, window, but=targets(sent))
                    await refresh(api, live)
                    window = []
                elif len(window) >= CHECK_EVERY:
                    await unchanged(api, live, window)
                    window = []
            await unchanged(api, live, window)
            tapi = tstub(channel)
            got = await tapi.GetTournament(
                tpb.GetTournamentRequest(tournament_id=live.tourney.tournament_id), timeout=5
            )
            assert got.tournament.status == tpb.TOURNAMENT_STATUS_RUNNING
            assert not got.tournament.cancelled and got.tournament.started == 3
            for entry in entries:  # still connected, not dropped
                assert not entry.call.done()
                entry.cancel()

            # Still serving, and a normal match still plays to its end and audits clean.
            health = await health_check(channel)(health_pb2.HealthCheckRequest(), timeout=5)
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            table = await create_table(api, metadata=auth(live.operator))
            await play_out_over_play(address, table)
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=table.match_id))
            report = audit_log(log)
            assert report.ok, report.failure
            return sent_count

    with ServerProcess(data_dir, extra=extra) as server:
        assert server.process is not None
        sent_count = asyncio.run(asyncio.wait_for(scenario(server.address), CAP_SECONDS + 40))
        assert server.process.poll() is None, "the server died"
        assert server.terminate() == 0
    assert sent_count >= REQUESTS, f"only {sent_count} requests in {CAP_SECONDS} s"
    assert set(counts) == {m.name for m in METHODS}, counts
    # Deep enough to meet every kind of refusal, not only the decoder's.
    assert set(codes) >= DEPTH, codes
    text = server.stderr_path.read_text()
    faults = [r for r in log_records(server.stderr_path) if r.get("level") in ("error", "critical")]
    assert not faults, faults[:3]
    for hidden in live.secrets():
        assert hidden not in text, "a secret is in the server's log"
