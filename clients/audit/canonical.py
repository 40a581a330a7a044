"""The fine print of the audit's first check: an entry passes only in canonical form.

Why strict decoding: protobuf parsing is lenient (unknown fields are kept, a bool may be any
varint, a card's code is informative), so a forger could change an entry's bytes without
changing what a lenient reader sees. An entry passes only if it is exactly the canonical
encoding of the event it decodes to, so every byte of a log is accounted for.

Why a memo: most entries of a log, and of every log of a tournament, are the same few
payloads (a seat plays a card, a seat passes) at different seqs. An entry's canonical
encoding is its seq (field 1, first) followed by its one event field; for any kind but
MatchStarted (whose decoding depends on nothing else either, but whose bytes have no fixed
order) neither its decoding nor its canonical form depends on the seq or on the rest of the
log. So an entry that is exactly ``0x08 varint(seq)`` followed by a payload already shown
canonical is canonical, and decodes to the same (immutable) engine event: the full check
runs once per distinct payload, and its verdict is the same as for every entry that repeats it.
Such an entry is not even parsed: the decode loop (``Checks.check_decode``) looks its bytes
up behind the prefix of the seq it stands at, and knows its kind and event from the memo.

Why a reader of its own: the payloads that never repeat (a trick, a deal, a round's scores,
dead cards, the end; a card played, the first time) are most of the rest. For each, the
canonical bytes are a concatenation of pieces in a fixed order, which :mod:`.pieces` puts
together (pinned to the codec by tests) and reads back as exactly that concatenation, piece
by piece, with no protobuf parse, conversion or re-encoding; bytes in any other layout
decline to the full check here, which gives the verdict and the reason.
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import text_format
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1.clocks import ACTION_KINDS

from . import pieces
from .pieces import Assembled, put_together, seq_prefix


class NotCanonical(ValueError):
    """An entry's bytes are not exactly one well-formed event of this protocol."""


SHOWN: dict[bytes, tuple[str, ev.Event | None]] = {}
"""Payloads (an entry's bytes after its seq) shown canonical, with the kind of event each is
and what it decodes to. The audit's decode loop looks entries up here before it parses them:
an entry that is ``PREFIXES[n]`` (the canonical seq ``n``) and then a payload found here is
the canonical encoding of an event whose seq is ``n`` (a payload holds no seq field of its
own), so it needs no parse at all."""
_SHOWN_MAX: Final = 100_000


ONCE: Final = frozenset({"trick_won", "round_scored", "match_ended"})
"""Kinds whose payloads (nearly) never repeat, even across a tournament's logs (a trick's
number, cards and seats; a round's scores): :func:`assemble` reads them quickly enough that
the decode loop does not fill the memo with them. (Dead cards do repeat: of 3,734 in 30
Crazy Sixes logs, 473 were distinct.)"""


def forget() -> None:
    """Empty the memos (a benchmark's rounds each start cold, as an audit of new logs does)."""
    SHOWN.clear()
    _OPTIONS.clear()
    pieces.forget()


def decode_entry(event: pb.Event, raw: bytes) -> ev.Event | None:
    """The engine event (``None`` for a server-only one), once the entry is shown canonical."""
    return decode_kind(event, raw)[1]


def decode_kind(event: pb.Event, raw: bytes) -> tuple[str, ev.Event | None]:
    """The kind of ``event`` (its oneof field) and what :func:`decode_entry` decodes it to;
    raises :class:`NotCanonical`."""
    payload = None
    if event.seq > 0:
        prefix = seq_prefix(event.seq)
        if raw.startswith(prefix):
            payload = raw[len(prefix) :]
            known = SHOWN.get(payload)
            if known is not None:
                return known
    kind = event.WhichOneof("kind")
    decoded = _decode_checked(event, raw)
    assert kind is not None  # the check refuses an event of no kind
    if payload is not None and kind != "match_started":
        remember(payload, kind, decoded)
    return kind, decoded


def remember(payload: bytes, kind: str, decoded: ev.Event | None) -> None:
    """Note ``payload`` as shown canonical (it decodes to ``decoded``, of ``kind``)."""
    if len(SHOWN) >= _SHOWN_MAX:
        SHOWN.clear()
    SHOWN[payload] = (kind, decoded)


def _decode_checked(event: pb.Event, raw: bytes) -> ev.Event | None:
    """The check of :func:`decode_entry`, for a payload not shown canonical before.

    First the short way, enough for a canonical engine event: it is canonical if and only if
    the canonical encoding of what it decodes to is its bytes, byte for byte (which leaves no
    room for an unknown field, another card code or another encoding). Anything else takes
    the long way, which says what is wrong.
    """
    kind = event.WhichOneof("kind")
    if kind == "match_started":
        return _match_started(event, raw)
    if kind is not None:
        try:
            decoded = codec.event_from_pb(event)
        except (ValueError, ArithmeticError):
            decoded = None
        if isinstance(decoded, Assembled) and event.seq > 0:
            if put_together(event.seq, decoded) == raw:
                return decoded
        elif decoded is not None:
            canonical = codec.event_to_pb(decoded, event.seq, "")
            if canonical.SerializeToString(deterministic=True) == raw:
                return decoded
    return _decode_strict(event, raw)


def _match_started(event: pb.Event, raw: bytes) -> ev.Event | None:
    """MatchStarted, whose options (a Struct, the costly part) are shown canonical once per
    distinct options: their deterministic encoding (unknown fields included) is the key, so
    options seen canonical before are canonical again, and decode to the same normalised
    options. The rest of the message is compared with its canonical form as always."""
    started = event.match_started
    key = started.options.SerializeToString(deterministic=True)
    options = _OPTIONS.get(key)
    if (
        options is not None
        and not len(UnknownFieldSet(event))
        and not len(UnknownFieldSet(started))
    ):
        decoded = ev.MatchStarted(started.game, started.players, options, started.seed_commitment)
        canonical = _encoded_as(
            event, ev.MatchStarted(started.game, started.players, {}, started.seed_commitment)
        )
        bare = pb.Event()
        bare.CopyFrom(event)
        for message in (bare, canonical):
            message.match_started.ClearField("options")
        if canonical == bare:
            return decoded
    checked = _decode_strict(event, raw)
    assert isinstance(checked, ev.MatchStarted)  # a match_started event that passed
    if len(_OPTIONS) >= _SHOWN_MAX:
        _OPTIONS.clear()
    _OPTIONS[key] = checked.options
    return checked


CHARGED: Final = ACTION_KINDS | {"timed_out"}
"""The entries that may carry the time a seat was charged (``Event.think_ms``)."""

_OPTIONS: dict[bytes, Any] = {}
"""Options (a MatchStarted's Struct, encoded deterministically) shown canonical, normalised."""


def _encoded_as(event: pb.Event, decoded: ev.Event) -> pb.Event:
    """``decoded`` encoded as the codec encodes it at ``event``'s seq, with the match id and
    server settings a MatchStarted carries taken from ``event`` (they are the start check's to
    judge; any other event has none), and the time an action was charged (the server check's
    to judge, on the entries that may carry it)."""
    started = event.match_started
    out = codec.event_to_pb(
        decoded,
        event.seq,
        started.match_id,
        move_ms=started.move_ms,
        reserved_seats=started.reserved_seats,
        forfeit_after=started.forfeit_after,
        tournament_id=started.tournament_id,
        clocks={
            "bank_ms": started.bank_ms,
            "increment_ms": started.increment_ms,
            "round_ms": started.round_ms,
        },
    )
    if event.HasField("think_ms") and event.WhichOneof("kind") in CHARGED:
        out.think_ms = event.think_ms
    return out


def _decode_strict(event: pb.Event, raw: bytes) -> ev.Event | None:
    """Every step of the check, each with its own reason."""
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
        canonical = _encoded_as(event, decoded)
        if canonical != event:
            path = field_path(event, canonical)
            mine, theirs = around_difference(_text(event), _text(canonical))
            raise NotCanonical(
                f"the {kind} event is not in canonical form"
                f"{f' at {path}' if path else ''}: recorded {mine}; canonical {theirs}",
            )
    # A Struct's map has no fixed byte order, so MatchStarted is compared as a message only.
    if kind != "match_started":
        encoded = event.SerializeToString(deterministic=True)
        if encoded != raw:
            at = _first_difference(raw, encoded)
            mine, theirs = around_difference(raw.hex(" "), encoded.hex(" "), at=3 * at)
            raise NotCanonical(
                f"the {kind} event's bytes are not its canonical encoding: they differ from"
                f" byte {at} of {len(raw)}: recorded {mine}; canonical {theirs}"
            )
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


SHOWN_CHARS: Final = 160
"""The most of each form of an event a reason shows."""
CONTEXT_CHARS: Final = 40
"""How much of a long form is shown before the first character where the two forms differ."""


def _text(message: Message) -> str:
    return text_format.MessageToString(message, as_one_line=True)


def _first_difference(mine: str | bytes, theirs: str | bytes) -> int:
    """The index of the first item where ``mine`` and ``theirs`` differ (or where the shorter
    one ends)."""
    pairs = zip(mine, theirs, strict=False)
    return next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(mine), len(theirs)))


def around_difference(
    mine: str, theirs: str, *, at: int | None = None, limit: int = SHOWN_CHARS
) -> tuple[str, str]:
    """Two forms of one thing, each cut to ``limit`` characters around the first place they
    differ (``at``, found when not given): both whole if they fit, else both from the same
    point a little before it (at a word's start), an ellipsis where a form is cut, so that
    the difference is always shown."""
    if len(mine) <= limit and len(theirs) <= limit:
        return mine, theirs
    if at is None:
        at = _first_difference(mine, theirs)
    start = max(0, at - CONTEXT_CHARS)
    space = mine.find(" ", start, at)
    if start and space >= 0:
        start = space + 1
    return _cut(mine, start, limit), _cut(theirs, start, limit)


def _cut(text: str, start: int, limit: int) -> str:
    end = start + limit
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def field_path(mine: Message, theirs: Message, path: str = "") -> str | None:
    """The first field (in field-number order, as the text form prints them) whose values
    differ in two messages of one type, as a path (``dealt.hands[1].cards[0].code``);
    ``None`` if no field differs (the messages differ in unknown fields, or are equal)."""
    for field in mine.DESCRIPTOR.fields:
        here = f"{path}.{field.name}" if path else field.name
        a, b = getattr(mine, field.name), getattr(theirs, field.name)
        kind = field.message_type
        if kind is not None and kind.GetOptions().map_entry:
            nested = kind.fields_by_name["value"].message_type is not None
            for key in sorted(set(a) | set(b)):
                at = f"{here}[{key!r}]"
                if key not in a or key not in b:
                    return at
                if a[key] != b[key]:
                    return (field_path(a[key], b[key], at) or at) if nested else at
        elif field.is_repeated:
            for index, (x, y) in enumerate(zip(a, b, strict=False)):
                if x != y:
                    at = f"{here}[{index}]"
                    return (field_path(x, y, at) or at) if kind is not None else at
            if len(a) != len(b):
                return f"{here}[{min(len(a), len(b))}]"
        elif field.has_presence and mine.HasField(field.name) != theirs.HasField(field.name):
            return here
        elif a != b:
            return (field_path(a, b, here) or here) if kind is not None else here
    return None
