"""Argument types for the command-line tools, written once: each refuses bad input clearly.

Why one module: every command takes counts, seeds and server addresses, and should refuse
``--deals 0`` or a short seed in the same words (argparse prints them, after the flag's name,
and exits 2). Every number has a range (:func:`whole`, :func:`seconds`): a count too large to
send, or to allocate, is refused here rather than after the work has begun.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import tempfile
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cardarena.engine.fairdeal import SEED_SIZE

from ..client.channel import check_address

if TYPE_CHECKING:
    from ..tournament.botspec import BotEntry

HASH_SIZE = 32

# The server's own bounds (it refuses anything beyond them), checked here before any call.
MAX_SEATS = 64
"""Seats of a match: at most the entrants a tournament may have."""
MAX_DEALS = 10_000
MAX_CONCURRENCY = 256
MAX_MOVE_MS = 3_600_000
MAX_FORFEIT_AFTER = 1000
# What this machine may be asked for.
MAX_WORKERS = 256
MAX_CPU_SECONDS = 10_000_000
MIN_MEMORY_MB = 256
"""Less address space than this, and a bot's process cannot even start Python and gRPC."""
MAX_MEMORY_MB = 1 << 20
MAX_WAIT_S = 86_400.0

T = TypeVar("T")


def whole(low: int, high: int | None = None, *, zero: str | None = None) -> Callable[[str], int]:
    """A flag's type: a whole number from ``low`` to ``high`` (no bound: ``None``), or 0 where
    ``zero`` says what 0 means (``"no limit"``)."""
    bounds = f">= {low}" + ("" if high is None else f" and <= {high}")
    refusal = f"a whole number {bounds}"
    if zero is not None:
        refusal = f"0 ({zero}) or {refusal}"

    def parse(text: str) -> int:
        value = _converted(text, int, f"expected {refusal}, got {text!r}")
        if not (low <= value and (high is None or value <= high)) and not (
            zero is not None and value == 0
        ):
            raise argparse.ArgumentTypeError(f"expected {refusal}, got {text!r}")
        return value

    return parse


def seconds(high: float) -> Callable[[str], float]:
    """A flag's type: a number of seconds, more than 0 and at most ``high``."""
    refusal = f"expected a number of seconds > 0 and <= {high:g}"

    def parse(text: str) -> float:
        value = _converted(text, float, f"{refusal}, got {text!r}")
        if not 0 < value <= high:  # NaN too
            raise argparse.ArgumentTypeError(f"{refusal}, got {text!r}")
        return value

    return parse


positive_int = whole(1)
non_negative_int = whole(0)
positive_seconds = seconds(MAX_WAIT_S)


def seed_hex(text: str) -> bytes:
    seed = _converted(text, bytes.fromhex, f"a seed is {SEED_SIZE * 2} hex digits, got {text!r}")
    if len(seed) != SEED_SIZE:
        raise argparse.ArgumentTypeError(f"a seed is {SEED_SIZE * 2} hex digits, got {len(text)}")
    return seed


def hash_hex(text: str) -> bytes:
    refusal = f"a hash is {HASH_SIZE * 2} hex digits, got {text!r}"
    value = _converted(text, bytes.fromhex, refusal)
    if len(value) != HASH_SIZE:
        raise argparse.ArgumentTypeError(refusal)
    return value


def server_address(text: str) -> str:
    """``HOST:PORT`` (port 1..65535, an IPv6 host in brackets), a gRPC target with its scheme,
    or several replicas' IPv4 ``HOST:PORT``s, comma-separated."""
    try:
        return check_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("options must be a JSON object")
    return value


def output_file(text: str) -> Path:
    """A file to write when the work is done: checked now, so that a typo fails before a
    tournament is played rather than after. It is opened for writing (and a file made for
    the check removed again), since only the system knows what may be written (``/proc``,
    a read-only mount, and every folder for root, pass ``os.access``)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory, not a file to write")
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: no directory {folder}")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text}: {folder} is not writable")
    if path.exists() and not path.is_file():
        return path  # a device or a pipe (/dev/stdout): opening it may wait for a reader
    existed = path.exists()
    try:
        with path.open("ab"):  # nothing written: an existing file is left as it was
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot write {text}: {error.strerror}") from None
    if not existed:
        with contextlib.suppress(OSError):
            path.unlink()
    return path


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Around the writing of an output a flag named: a failure (a full disk, ``/dev/full``)
    names the file, as the one line the command line says it in (exit 1)."""
    try:
        yield
    except OSError as error:
        if error.filename is not None:
            raise
        raise OSError(error.errno, error.strerror, str(path)) from None


def output_dir(text: str) -> Path:
    """A directory to write into (created if missing, inside one that exists), checked now by
    making (and removing) a file in it, or the directory itself."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a directory")
    if not path.exists() and not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create {text}: no directory {path.parent}")
    try:
        if path.exists():
            with tempfile.TemporaryFile(dir=path):
                pass
        else:
            path.mkdir()
            path.rmdir()
    except OSError as error:
        verb = "write into" if path.exists() else "create"
        raise argparse.ArgumentTypeError(f"cannot {verb} {text}: {error.strerror}") from None
    return path


def checked_bot(text: str) -> BotEntry:
    """A ``--bot`` value, parsed and checked before the first match: ``ValueError`` naming the
    bot, and the parameter, if it cannot be made. ``KEY=VALUE`` parameters get the types
    the bot's constructor declares (``budget_ms=abc`` is refused, ``policy=7`` is text)."""
    # Imported here, not above: the bots weigh a quarter of a second, which every command
    # taking a number (``health`` in a container's health check) would pay for nothing.
    from ..tournament.botspec import check_bot, parse_bot  # noqa: PLC0415

    entry = parse_bot(text)
    if entry.kind == "python" and entry.params:
        declared = _declared_types(entry.target)
        entry = replace(
            entry,
            params={
                key: _typed(entry.name, key, value, declared.get(key))
                for key, value in entry.params.items()
            },
        )
    try:
        return check_bot(entry)
    except ValueError:
        raise
    except Exception as error:  # the bot's constructor: any failure is the bot's
        raise ValueError(
            f"bot {entry.name!r} cannot be made: {type(error).__name__}: {error}"
        ) from None


_KINDS = {"bool": "true or false", "int": "a whole number", "float": "a number", "str": "text"}


def _declared_types(target: str) -> dict[str, set[str]]:
    """The type names (``int``, ``float``, ``bool``, ``str``) each constructor parameter of
    the bot ``target`` declares; none for a parameter of another type or none declared, or
    for a bot that cannot be loaded (its loading says why, in its own words)."""
    from ..bots import base  # noqa: PLC0415 (see checked_bot)

    module_name, _, class_name = base.REFERENCE.get(target, target).rpartition(":")
    try:
        factory = getattr(base._module_of(module_name), class_name)
        parameters = inspect.signature(factory).parameters
    except Exception:
        return {}
    return {
        name: names
        for name, parameter in parameters.items()
        if (names := _type_names(parameter.annotation))
    }


def _type_names(annotation: Any) -> set[str]:
    """``{"int"}`` for ``int`` or ``"int"``, ``{"float"}`` for ``float | None``; empty for
    anything else, whose values are passed on as they are."""
    if isinstance(annotation, str):
        names = {part.strip() for part in annotation.split("|")}
    elif isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        names = {getattr(arg, "__name__", "") for arg in typing.get_args(annotation)}
    else:
        names = {getattr(annotation, "__name__", "")}
    names.discard("None")
    return names if names and names <= set(_KINDS) else set()


def _typed(bot: str, key: str, value: Any, declared: set[str] | None) -> Any:
    """``value`` (as :func:`~cardarena.clients.tournament.botspec.parse_bot` read it) as a
    value of a type the parameter declares, or ``ValueError`` naming the parameter."""
    kind = "bool" if isinstance(value, bool) else type(value).__name__
    if declared and kind not in declared and not (kind == "int" and "float" in declared):
        if "str" in declared:
            return str(value).lower() if isinstance(value, bool) else str(value)
        expected = " or ".join(_KINDS[name] for name in sorted(declared))
        raise ValueError(f"bot {bot!r}: {key} is {expected}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"bot {bot!r}: {key} is a finite number, got {value!r}")
    return value


def _converted(text: str, convert: Callable[[str], T], refusal: str) -> T:
    """``convert(text)``, its ``ValueError`` turned into argparse's refusal (exit 2)."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(refusal) from None
