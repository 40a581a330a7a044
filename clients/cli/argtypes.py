"""Argument types for the command-line tools, written once: each refuses bad input clearly.

Why one module: every command takes counts, seeds and server addresses, and should refuse
``--deals 0`` or a short seed in the same words (argparse prints them and exits 2).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cardarena.engine.fairdeal import SEED_SIZE

from ..client.channel import channel_target

HASH_SIZE = 32

T = TypeVar("T")


def positive_int(text: str) -> int:
    return _whole_number(text, minimum=1)


def non_negative_int(text: str) -> int:
    return _whole_number(text, minimum=0)


def positive_seconds(text: str) -> float:
    value = _converted(text, float, f"expected a number of seconds, got {text!r}")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


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
    """``HOST:PORT``, a gRPC target, or several replicas' IPv4 ``HOST:PORT``s, comma-separated."""
    try:
        channel_target(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not text.strip():
        raise argparse.ArgumentTypeError("expected HOST:PORT, got nothing")
    return text


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
    tournament is played rather than after."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory, not a file to write")
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: no directory {folder}")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text}: {folder} is not writable")
    return path


def output_dir(text: str) -> Path:
    """A directory to write into (created if missing, inside one that exists)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a directory")
    if not path.exists() and not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create {text}: no directory {path.parent}")
    return path


def _whole_number(text: str, *, minimum: int) -> int:
    value = _converted(text, int, f"expected a whole number, got {text!r}")
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
    return value


def _converted(text: str, convert: Callable[[str], T], refusal: str) -> T:
    """``convert(text)``, its ``ValueError`` turned into argparse's refusal (exit 2)."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(refusal) from None
