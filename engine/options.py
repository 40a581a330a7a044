"""Option schemas: validate a JSON-like options object once, fill in defaults, describe it.

A schema is a tree of small spec objects. ``validate`` returns the normalised value (every
default filled in) or raises :class:`OptionError` naming the offending path and what is
allowed. ``describe`` returns a JSON-Schema-shaped dict, so that a frontend can build a form.
Normalising is idempotent: validating a normalised value returns it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import OptionError

JSON = Any


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def whole_number(value: object, path: str) -> int:
    """Numbers are whole: ``2`` and ``2.0`` are two, ``2.5`` and ``True`` are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError(path, f"expected a whole number, got {_type_name(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise OptionError(path, f"expected a whole number, got {value!r}")
        return int(value)
    return value


@dataclass(frozen=True)
class IntSpec:
    default: int
    minimum: int
    maximum: int | None = None
    description: str = ""

    def validate(self, value: JSON, path: str) -> int:
        number = whole_number(value, path)
        if number < self.minimum or (self.maximum is not None and number > self.maximum):
            upper = "" if self.maximum is None else f" and at most {self.maximum}"
            raise OptionError(path, f"must be at least {self.minimum}{upper}, got {number}")
        return number

    def describe(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"type": "integer", "default": self.default, "minimum": self.minimum}
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return _with_description(out, self.description)


@dataclass(frozen=True)
class BoolSpec:
    default: bool
    description: str = ""

    def validate(self, value: JSON, path: str) -> bool:
        if not isinstance(value, bool):
            raise OptionError(path, f"expected true or false, got {_type_name(value)}")
        return value

    def describe(self) -> dict[str, JSON]:
        return _with_description({"type": "boolean", "default": self.default}, self.description)


@dataclass(frozen=True)
class ChoiceSpec:
    """One of a fixed list of strings or whole numbers."""

    default: str | int | None
    choices: tuple[str | int, ...]
    description: str = ""

    def validate(self, value: JSON, path: str) -> str | int:
        candidate: JSON = value
        if all(isinstance(c, int) for c in self.choices) and not isinstance(value, str):
            candidate = whole_number(value, path)
        if isinstance(candidate, bool) or candidate not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise OptionError(path, f"must be one of {allowed}; got {_type_name(value)}")
        return candidate  # type: ignore[no-any-return]

    def describe(self) -> dict[str, JSON]:
        kind = "integer" if all(isinstance(c, int) for c in self.choices) else "string"
        out: dict[str, JSON] = {"type": kind, "enum": list(self.choices)}
        if self.default is not None:
            out["default"] = self.default
        return _with_description(out, self.description)


@dataclass(frozen=True)
class SeatSpec:
    """A seat number or ``"random"``; the seat range is checked against the player count."""

    default: int | str = 0
    description: str = ""

    def validate(self, value: JSON, path: str) -> int | str:
        if value == "random" and isinstance(value, str):
            return value
        if isinstance(value, str):
            raise OptionError(path, f'expected a seat number or "random", got {value!r}')
        seat = whole_number(value, path)
        if seat < 0:
            raise OptionError(path, f"a seat number is at least 0, got {seat}")
        return seat

    def describe(self) -> dict[str, JSON]:
        out = {
            "oneOf": [{"type": "integer", "minimum": 0}, {"const": "random"}],
            "default": self.default,
        }
        return _with_description(out, self.description)


@dataclass(frozen=True)
class ObjectSpec:
    """An object with known keys; unknown keys are refused, missing ones get their defaults.

    With ``fill_defaults=False`` missing keys stay missing (used for per-round overrides).
    """

    fields: Mapping[str, Spec]
    description: str = ""
    required: frozenset[str] = field(default_factory=frozenset)
    fill_defaults: bool = True

    def validate(self, value: JSON, path: str) -> dict[str, JSON]:
        if not isinstance(value, Mapping):
            raise OptionError(path, f"expected an object, got {_type_name(value)}")
        unknown = sorted(str(k) for k in value if k not in self.fields)
        if unknown:
            known = ", ".join(self.fields) or "none"
            raise OptionError(_join(path, unknown[0]), f"unknown option (known here: {known})")
        out: dict[str, JSON] = {}
        for key, spec in self.fields.items():
            if key in value:
                out[key] = spec.validate(value[key], _join(path, key))
            elif key in self.required:
                raise OptionError(_join(path, key), "is required")
            elif self.fill_defaults:
                out[key] = spec.validate(default_of(spec), _join(path, key))
        return out

    def describe(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "type": "object",
            "properties": {k: s.describe() for k, s in self.fields.items()},
            "additionalProperties": False,
        }
        if self.required:
            out["required"] = sorted(self.required)
        return _with_description(out, self.description)


@dataclass(frozen=True)
class TaggedSpec:
    """An object whose ``tag`` key picks which of several object shapes it has."""

    tag: str
    variants: Mapping[str, ObjectSpec]
    default: Mapping[str, JSON]
    description: str = ""

    def validate(self, value: JSON, path: str) -> dict[str, JSON]:
        if not isinstance(value, Mapping):
            raise OptionError(path, f"expected an object, got {_type_name(value)}")
        kind = value.get(self.tag)
        if not isinstance(kind, str) or kind not in self.variants:
            allowed = ", ".join(repr(k) for k in self.variants)
            raise OptionError(_join(path, self.tag), f"must be one of {allowed}")
        rest = {k: v for k, v in value.items() if k != self.tag}
        return {self.tag: kind, **self.variants[kind].validate(rest, path)}

    def describe(self) -> dict[str, JSON]:
        shapes = []
        for kind, spec in self.variants.items():
            shape = spec.describe()
            shape["properties"] = {self.tag: {"const": kind}, **shape["properties"]}
            shape["required"] = sorted({self.tag, *spec.required})
            shapes.append(shape)
        return _with_description({"oneOf": shapes, "default": dict(self.default)}, self.description)


class Spec(Protocol):
    """What every option spec offers: validation with defaults, and a description."""

    def validate(self, value: JSON, path: str) -> JSON: ...

    def describe(self) -> dict[str, JSON]: ...


def default_of(spec: Spec) -> JSON:
    if isinstance(spec, ObjectSpec):
        return {k: default_of(s) for k, s in spec.fields.items() if k not in spec.required}
    if isinstance(spec, TaggedSpec):
        return dict(spec.default)
    return getattr(spec, "default", None)


def _with_description(out: dict[str, JSON], description: str) -> dict[str, JSON]:
    if description:
        out["description"] = description
    return out


def check_seat(value: int | str, players: int, path: str) -> None:
    if isinstance(value, int) and value >= players:
        raise OptionError(
            path, f"seat {value} does not exist with {players} players (0..{players - 1})"
        )
