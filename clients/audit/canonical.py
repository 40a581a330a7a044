"""The fine print of the audit's first check: an entry passes only in canonical form.

Why strict decoding: protobuf parsing is lenient (unknown fields are kept, a bool may be any
varint, a card's code is informative), so a forger could change an entry's bytes without
changing what a lenient reader sees. An entry passes only if it is exactly the canonical
encoding of the event it decodes to, so every byte of a log is accounted for.
"""

from __future__ import annotations

from google.protobuf import text_format
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb


class NotCanonical(ValueError):
    """An entry's bytes are not exactly one well-formed event of this protocol."""


def decode_entry(event: pb.Event, raw: bytes) -> ev.Event | None:
    """The engine event (``None`` for a server-only one), once the entry is shown canonical."""
    if _has_unknown_fields(event):
        raise NotCanonical("the event carries fields this protocol does not define")
    kind = event.WhichOneof("kind")
    if kind is None:
        raise NotCanonical("the event has no kind")
    try:
        decoded = codec.event_from_pb(event)
    except (ValueError, ArithmeticError) as error:
        raise NotCanonical(f"the {kind} event does not decode: {error}") from None
    if decoded is not None:
        started = event.match_started  # its match id and settings: the start check's to judge
        canonical = codec.event_to_pb(
            decoded,
            event.seq,
            started.match_id,
            move_ms=started.move_ms,
            reserved_seats=started.reserved_seats,
            forfeit_after=started.forfeit_after,
            tournament_id=started.tournament_id,
        )
        if canonical != event:
            raise NotCanonical(
                f"the {kind} event is not in canonical form: recorded {_short(event)}; "
                f"canonical {_short(canonical)}",
            )
    # A Struct's map has no fixed byte order, so MatchStarted is compared as a message only.
    if kind != "match_started" and event.SerializeToString(deterministic=True) != raw:
        raise NotCanonical(f"the {kind} event's bytes are not its canonical encoding")
    return decoded


def _has_unknown_fields(message: Message) -> bool:
    if len(UnknownFieldSet(message)):
        return True
    for descriptor, value in message.ListFields():
        kind = descriptor.message_type
        if kind is None:
            continue
        if kind.GetOptions().map_entry:
            if kind.fields_by_name["value"].message_type is None:
                continue
            items = list(value.values())
        else:
            items = list(value) if descriptor.is_repeated else [value]
        if any(_has_unknown_fields(item) for item in items):
            return True
    return False


def _short(message: Message, limit: int = 160) -> str:
    text = text_format.MessageToString(message, as_one_line=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
