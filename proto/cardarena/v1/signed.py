"""The byte strings a server signs (docs/signatures.md), shared by the server and every auditor.

Why documented byte strings and not a signed protobuf message: protobuf serialisation is not
canonical, so a verifier in another language could not rebuild the exact bytes; these are a
fixed, length-prefixed layout anyone can write in a few lines. Each starts with its own
domain string and a NUL, so a signature over one kind of statement can never be passed off as
another (a checkpoint as results, or either as anything else signed with the same key).

The Ed25519 operations themselves are the server's (signing) and the auditor's (verifying);
this module has no cryptography beyond SHA-256, so the protocol package stays dependency-free.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from . import service_pb2 as spb
from . import tournament_pb2 as tpb

CHECKPOINT_DOMAIN: Final = b"cardarena-checkpoint-v1\x00"
RESULTS_DOMAIN: Final = b"cardarena-results-v2\x00"
PUBLIC_KEY_SIZE: Final = 32
SIGNATURE_SIZE: Final = 64
KEY_ID_HEX: Final = 16


def key_id(public_key: bytes) -> str:
    """A key's short name: the first 16 hex digits of SHA-256(raw public key)."""
    return hashlib.sha256(public_key).hexdigest()[:KEY_ID_HEX]


def _text(value: str) -> bytes:
    return _blob(value.encode("utf-8"))


def _blob(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


def _u32(value: int) -> bytes:
    return struct.pack(">I", value)


def _f64(value: float) -> bytes:
    return struct.pack(">d", value)


def checkpoint_message(match_id: str, last_seq: int, last_hash: bytes, signer: str) -> bytes:
    """What a checkpoint's signature covers: "the log of ``match_id`` ends at ``last_seq``
    with ``last_hash``", by the key named ``signer``."""
    return (
        CHECKPOINT_DOMAIN
        + _text(match_id)
        + struct.pack(">Q", last_seq)
        + _blob(last_hash)
        + _text(signer)
    )


def checkpoint_of(checkpoint: spb.Checkpoint) -> bytes:
    return checkpoint_message(
        checkpoint.match_id, checkpoint.last_seq, checkpoint.last_hash, checkpoint.key_id
    )


def results_message(info: tpb.TournamentInfo, signer: str) -> bytes:
    """What a tournament's results signature covers: every field of ``info`` but the signature
    itself (:func:`canonical`), by the key named ``signer``. Every field, by construction: its
    name, options, clocks, fault policy, stop rule, times, entrants, contributions, every
    match with its seats, totals, winners, faults and forfeits, the standings, the crosstable
    and the stop rule's state; a field added to the message later is covered the day it is
    set. (Version 1 listed the fields it covered, and left the options, clocks, times, the
    crosstable and each match's results out: edited, they still verified.)"""
    return RESULTS_DOMAIN + canonical(info, skip=frozenset({"results_signature"})) + _text(signer)


LADDER_DOMAIN: Final = b"cardarena-ladder-snapshot-v1\x00"
MATCHES_DIGEST_LABEL: Final = b"cardarena-ladder-matches-v1"


def ladder_message(snapshot: Message, signer: str) -> bytes:
    """What a ladder snapshot's signature covers: every field of ``snapshot`` (a
    ``LadderSnapshot``: the board, and through its digest every counted match) by the key
    named ``signer``."""
    return LADDER_DOMAIN + canonical(snapshot) + _text(signer)


def first_matches_digest() -> bytes:
    """A ladder's matches digest before its first counted match."""
    return hashlib.sha256(MATCHES_DIGEST_LABEL).digest()


def chain_match(digest: bytes, line: Message) -> bytes:
    """The matches digest with one more counted match (a ``LadderMatch``)."""
    return hashlib.sha256(digest + canonical(line)).digest()


_SIGNED_INT: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_ENUM,
    }
)
_UNSIGNED_INT: Final = frozenset(
    {
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
    }
)
_FLOATING: Final = frozenset({FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT})

Encoder = Callable[[Any], bytes]
"""One value of a field as :func:`canonical` writes it."""

PLAIN, REPEATED, MAP, PRESENCE = range(4)
"""How a field is written: left out at its default; as a count and items; as a count and
entries sorted by key; as 1 and its value when set."""


@dataclass(frozen=True, slots=True)
class _Field:
    """One field of a message type, as :func:`canonical` writes it: worked out once per type
    (by its descriptor), not per message: a tournament's results are signed over every match,
    and reading each field's descriptor again for each of 100,000 lines cost 43 us a line."""

    name: str
    number: bytes
    how: int
    encode: Encoder
    key: Encoder | None = None


_FIELDS: dict[Descriptor, tuple[_Field, ...]] = {}


def canonical(message: Message, *, skip: frozenset[str] = frozenset()) -> bytes:
    """A message as one byte string that any language rebuilds from the values alone (not
    protobuf's wire form, which is not canonical): its set fields in field-number order, each
    as its number (u32) and its value; a repeated field as its count and items; a map as its
    count and its entries sorted by key (a string key by its UTF-8 bytes); a message field
    (or a field with presence) as 1 and its value when it is set, and left out when it is not.
    Scalars: integers and enums as 8 bytes big-endian (signed where the type is), bool as one
    byte, float and double as an IEEE-754 double, strings (UTF-8) and bytes with a u32
    length. A field without presence at its default (0 with the sign bit clear, "", false,
    empty) is left out, so a field added to the schema changes no old message's bytes; -0.0
    is not the default, as on the wire (docs/signatures.md)."""
    parts: list[bytes] = []
    fields = _fields_of(message.DESCRIPTOR)
    # The set fields, in field-number order: a field without presence at its default (-0.0
    # is not: protobuf tells it apart, as on the wire) is not listed, so it is left out.
    for descriptor, value in message.ListFields():
        field = fields[descriptor.index]
        if field.name in skip:
            continue
        how = field.how
        if how == PLAIN:
            parts += [field.number, field.encode(value)]
        elif how == REPEATED:
            encode = field.encode
            parts += [field.number, _u32(len(value)), *[encode(item) for item in value]]
        elif how == MAP:
            key, encode = field.key, field.encode
            assert key is not None
            parts += [field.number, _u32(len(value))]
            parts += [key(k) + encode(value[k]) for k in sorted(value)]
        else:
            parts += [field.number, b"\x01", field.encode(value)]
    return b"".join(parts)


def _fields_of(descriptor: Descriptor) -> tuple[_Field, ...]:
    fields = _FIELDS.get(descriptor)
    if fields is None:
        ordered = cast("Sequence[FieldDescriptor]", descriptor.fields)
        fields = _FIELDS[descriptor] = tuple(_field(f) for f in ordered)
    return fields


def _field(field: FieldDescriptor) -> _Field:
    number = _u32(field.number)
    if _is_map(field):
        entry = field.message_type.fields_by_name
        return _Field(field.name, number, MAP, _encoder(entry["value"]), key=_encoder(entry["key"]))
    if field.is_repeated:
        return _Field(field.name, number, REPEATED, _encoder(field))
    if field.has_presence:
        return _Field(field.name, number, PRESENCE, _encoder(field))
    return _Field(field.name, number, PLAIN, _encoder(field))


def _nested(value: Message) -> bytes:
    nested = canonical(value)
    return _u32(len(nested)) + nested


def _encoder(field: FieldDescriptor) -> Encoder:
    kind = field.type
    if kind in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        return _nested
    if kind in _SIGNED_INT:
        return struct.Struct(">q").pack
    if kind in _UNSIGNED_INT:
        return struct.Struct(">Q").pack
    if kind == FieldDescriptor.TYPE_BOOL:
        return _bool
    if kind in _FLOATING:
        return _f64
    if kind == FieldDescriptor.TYPE_STRING:
        return _text
    assert kind == FieldDescriptor.TYPE_BYTES
    return _blob


def _bool(value: bool) -> bytes:
    return b"\x01" if value else b"\x00"


def unknown_fields_in(message: Message) -> bool:
    """Whether ``message`` (or any message in it) holds fields this schema does not know: a
    newer server's. They are dropped from :func:`canonical`, so its signature cannot be
    checked here; say so rather than call it doctored."""
    if len(UnknownFieldSet(message)):
        return True
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        items = value.values() if _is_map(field) else value if field.is_repeated else [value]
        if any(isinstance(item, Message) and unknown_fields_in(item) for item in items):
            return True
    return False


def _is_map(field: FieldDescriptor) -> bool:
    return (
        field.is_repeated
        and field.message_type is not None
        and field.message_type.GetOptions().map_entry
    )
