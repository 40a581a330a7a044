"""The canonical form against a plain reading of its definition (docs/signatures.md), on
random messages of every type of the protocol.

Why: :func:`cardarena.v1.signed.canonical` walks the fields protobuf lists as set
(``ListFields``) with a plan made once per message type, for speed (43 -> 12 us a tournament
line). That leans on protobuf listing set fields in field-number order and leaving out a
field without presence at its default but not -0.0. The reference below reads every field
of the descriptor instead, sorted by number, and checks the default itself: if protobuf ever
lists otherwise, signatures would change, and this fails first.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import struct
from collections.abc import Sequence
from typing import Any, cast

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

import cardarena.v1 as protocol
from cardarena.v1.signed import canonical

FD = FieldDescriptor

SIGNED = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_SINT32, FD.TYPE_SINT64}
SIGNED |= {FD.TYPE_SFIXED32, FD.TYPE_SFIXED64, FD.TYPE_ENUM}
UNSIGNED = {FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_FIXED32, FD.TYPE_FIXED64}
FLOATING = {FD.TYPE_DOUBLE, FD.TYPE_FLOAT}


def fields_of(message: Message) -> list[FieldDescriptor]:
    return list(cast("Sequence[FieldDescriptor]", message.DESCRIPTOR.fields))


def entry_of(field: FieldDescriptor) -> dict[str, FieldDescriptor]:
    """A map field's key and value fields."""
    assert field.message_type is not None
    return dict(field.message_type.fields_by_name)


def u32(value: int) -> bytes:
    return struct.pack(">I", value)


def is_map(field: FD) -> bool:
    return bool(field.message_type is not None and field.message_type.GetOptions().map_entry)


def value_bytes(field: FD, value: Any) -> bytes:
    if field.type == FD.TYPE_MESSAGE:
        nested = reference(value)
        return u32(len(nested)) + nested
    if field.type in SIGNED:
        return struct.pack(">q", value)
    if field.type in UNSIGNED:
        return struct.pack(">Q", value)
    if field.type == FD.TYPE_BOOL:
        return b"\x01" if value else b"\x00"
    if field.type in FLOATING:
        return struct.pack(">d", value)
    raw: bytes = value.encode() if field.type == FD.TYPE_STRING else value
    return u32(len(raw)) + raw


def at_default(field: FD, value: Any) -> bool:
    if field.type in FLOATING:
        return struct.pack(">d", value) == struct.pack(">d", 0.0)
    return bool(value == field.default_value)


def reference(message: Message) -> bytes:
    parts = []
    for field in sorted(fields_of(message), key=lambda f: f.number):
        value = getattr(message, field.name)
        if is_map(field):
            if value:
                entry = entry_of(field)
                parts += [u32(field.number), u32(len(value))]
                parts += [
                    value_bytes(entry["key"], k) + value_bytes(entry["value"], value[k])
                    for k in sorted(value)
                ]
        elif field.is_repeated:
            if len(value):
                parts += [u32(field.number), u32(len(value))]
                parts += [value_bytes(field, item) for item in value]
        elif field.has_presence:
            if message.HasField(field.name):
                parts += [u32(field.number), b"\x01", value_bytes(field, value)]
        elif not at_default(field, value):
            parts += [u32(field.number), value_bytes(field, value)]
    return b"".join(parts)


def scalar(field: FD, rng: random.Random) -> Any:
    kind = field.type
    if kind == FD.TYPE_STRING:
        return rng.choice(["", "a", "é€", "x" * rng.randrange(5)])
    if kind == FD.TYPE_BYTES:
        return rng.choice([b"", b"\x00", bytes(rng.randrange(9))])
    if kind == FD.TYPE_BOOL:
        return rng.random() < 0.5
    if kind in FLOATING:
        return rng.choice([0.0, -0.0, 1.5, -2.25])
    if kind == FD.TYPE_ENUM:
        assert field.enum_type is not None
        return rng.choice([v.number for v in field.enum_type.values])
    if kind in UNSIGNED:
        return rng.choice([0, rng.randrange(2**31)])
    return rng.choice([0, rng.randrange(-(2**31), 2**31)])


def fill(message: Message, rng: random.Random, depth: int = 0) -> None:
    """Set a random part of ``message``'s fields, in a random order, to random values."""
    fields = fields_of(message)
    rng.shuffle(fields)
    for field in fields:
        if rng.random() < 0.3 or (field.message_type is not None and depth >= 3):
            continue
        value = getattr(message, field.name)
        if is_map(field):
            entry = entry_of(field)
            for _ in range(rng.randrange(3)):
                key = scalar(entry["key"], rng)
                if entry["value"].message_type is not None:
                    fill(value[key], rng, depth + 1)
                else:
                    value[key] = scalar(entry["value"], rng)
        elif field.is_repeated:
            for _ in range(rng.randrange(4)):
                if field.message_type is not None:
                    fill(value.add(), rng, depth + 1)
                else:
                    value.append(scalar(field, rng))
        elif field.message_type is not None:
            value.SetInParent()
            fill(value, rng, depth + 1)
        else:
            setattr(message, field.name, scalar(field, rng))


def message_types() -> list[type[Message]]:
    modules = [
        importlib.import_module(f"{protocol.__name__}.{module.name}")
        for module in pkgutil.iter_modules(protocol.__path__)
        if module.name.endswith("_pb2")
    ]
    return [
        getattr(module, name)
        for module in modules
        for name in sorted(module.DESCRIPTOR.message_types_by_name)
    ]


@pytest.mark.parametrize("kind", message_types(), ids=lambda kind: kind.DESCRIPTOR.full_name)
def test_canonical_is_the_plain_reading_on_random_messages(kind: type[Message]) -> None:
    rng = random.Random(kind.DESCRIPTOR.full_name)
    for _ in range(30):
        message = kind()
        fill(message, rng)
        assert canonical(message) == reference(message), message
