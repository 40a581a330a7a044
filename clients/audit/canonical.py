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
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any, Final

from google.protobuf import text_format
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb


class NotCanonical(ValueError):
    """An entry's bytes are not exactly one well-formed event of this protocol."""


SHOWN: dict[bytes, tuple[str, ev.Event | None]] = {}
"""Payloads (an entry's bytes after its seq) shown canonical, with the kind of event each is
and what it decodes to. The audit's decode loop looks entries up here before it parses them:
an entry that is ``PREFIXES[n]`` (the canonical seq ``n``) and then a payload found here is
the canonical encoding of an event whose seq is ``n`` (a payload holds no seq field of its
own), so it needs no parse at all."""
_SHOWN_MAX: Final = 100_000


def forget() -> None:
    """Empty the memos (a benchmark's rounds each start cold, as an audit of new logs does)."""
    SHOWN.clear()
    _OPTIONS.clear()


def _seq_prefix(seq: int) -> bytes:
    """The canonical encoding of ``seq`` as field 1 of an Event: tag 0x08, then its varint."""
    if seq < len(PREFIXES):
        return PREFIXES[seq]
    return b"\x08" + _varint(seq)


def decode_entry(event: pb.Event, raw: bytes) -> ev.Event | None:
    """The engine event (``None`` for a server-only one), once the entry is shown canonical."""
    return decode_kind(event, raw)[1]


def decode_kind(event: pb.Event, raw: bytes) -> tuple[str | None, ev.Event | None]:
    """The kind of ``event`` (its oneof field, ``None`` for none) and what
    :func:`decode_entry` decodes it to; raises :class:`NotCanonical`."""
    payload = None
    if event.seq > 0:
        prefix = _seq_prefix(event.seq)
        if raw.startswith(prefix):
            payload = raw[len(prefix) :]
            known = SHOWN.get(payload)
            if known is not None:
                return known
    kind = event.WhichOneof("kind")
    decoded = _decode_checked(event, raw)
    if payload is not None and kind is not None and kind != "match_started":
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


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _card_field(card: int, tag: int = 0x1A) -> bytes:
    """A field (field 3 by default) holding ``card``'s canonical Card message: its tag,
    length and bytes."""
    known = _CARDS.get((tag, card))
    if known is None:
        encoded = codec.card_to_pb(card).SerializeToString(deterministic=True)
        known = _CARDS[(tag, card)] = bytes([tag]) + _varint(len(encoded)) + encoded
    return known


_CARDS: dict[tuple[int, int], bytes] = {}
PREFIXES: Final = [b"\x08" + _varint(seq) for seq in range(1 << 14)]
"""The seq prefixes of the first 16384 entries (a long match has a few thousand)."""


def _cards(cards: Iterable[int], tag: int = 0x1A) -> bytes:
    """A repeated field of Card messages: field 3 as TrickWon and Hand hold them, or another."""
    return b"".join(_card_field(card, tag) for card in cards)


def _scalar(tag: int, value: int) -> bytes:
    return bytes([tag]) + _varint(value) if value else b""


def _score_field(tag: bytes, score: int | Fraction) -> bytes:
    """A Score message as field ``tag``: numerator 1 (int64, two's complement when below 0,
    not written when 0), denominator 2."""
    known = _SCORES.get((tag, score))
    if known is None:
        value = Fraction(score)
        body = _scalar(0x08, value.numerator & _INT64) + _scalar(0x10, value.denominator)
        known = _SCORES[(tag, score)] = tag + _varint(len(body)) + body
    return known


_SCORES: dict[tuple[bytes, int | Fraction], bytes] = {}
_INT64: Final = (1 << 64) - 1


Assembled = ev.TrickWon | ev.Dealt | ev.RoundScored | ev.CardsDead
"""The kinds :func:`put_together` encodes."""


def put_together(seq: int, event: Assembled) -> bytes:
    """The canonical encoding of ``event`` at ``seq`` (> 0), put together from its cards' own:
    the payloads a log has most of that never repeat (a test pins this to the codec). Field
    numbers of game.proto: Event.seq 1, Event.dealt 15, Event.trick_won 20, Event.cards_dead
    21, Event.round_scored 23; TrickWon.trick 1, leader 2, cards 3, seat 4; Dealt.round 1,
    hands 2; Hand.hidden 1, size 2, cards 3; CardsDead.seat 1, cards 2; RoundScored.round 1,
    scores 2, totals 3. A scalar that is 0 (false) is
    not written; a message field is, even when empty."""
    if isinstance(event, ev.TrickWon):
        body = (
            _scalar(0x08, event.trick)
            + _scalar(0x10, event.leader)
            + _cards(event.cards)
            + _scalar(0x20, event.seat)
        )
        tag = b"\xa2\x01"
    elif isinstance(event, ev.RoundScored):
        body = (
            _scalar(0x08, event.round)
            + b"".join(_score_field(b"\x12", score) for score in event.scores)
            + b"".join(_score_field(b"\x1a", total) for total in event.totals)
        )
        tag = b"\xba\x01"
    elif isinstance(event, ev.CardsDead):
        body = _scalar(0x08, event.seat) + _cards(event.cards, 0x12)
        tag = b"\xaa\x01"
    else:
        body = _scalar(0x08, event.round)
        for hand, size in zip(event.hands, event.hand_sizes, strict=True):
            held = (
                b"\x08\x01" + _scalar(0x10, size)
                if hand is None
                else _scalar(0x10, len(hand)) + _cards(hand)
            )
            body += b"\x12" + _varint(len(held)) + held
        tag = b"\x7a"
    return _seq_prefix(seq) + tag + _varint(len(body)) + body


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
        canonical = codec.event_to_pb(
            ev.MatchStarted(started.game, started.players, {}, started.seed_commitment),
            event.seq,
            started.match_id,
            move_ms=started.move_ms,
            reserved_seats=started.reserved_seats,
            forfeit_after=started.forfeit_after,
            tournament_id=started.tournament_id,
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


_OPTIONS: dict[bytes, Any] = {}
"""Options (a MatchStarted's Struct, encoded deterministically) shown canonical, normalised."""


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
