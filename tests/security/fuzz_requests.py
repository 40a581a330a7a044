"""The fuzzer's requests, from a fixed seed: messages built at random from the protobuf
descriptors (field values from the live match ids, seats and secrets as well as edge cases),
valid requests with bits flipped, bytes cut, inserted or repeated, random bytes, random
credentials.
"""

from __future__ import annotations

import random
from typing import Any

from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from google.protobuf.message import DecodeError, Message

from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import LAST, auth
from .fuzz_support import METHODS, Live, Sent, request_class
from .support import Table, secret
from .tournaments import create_request

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
