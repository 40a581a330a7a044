"""Argument types for the command-line tools: each refuses bad input with a clear message."""

from __future__ import annotations

import argparse

from cardarena.engine.fairdeal import SEED_SIZE

from .client import channel_target


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def seed_hex(text: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a seed is {SEED_SIZE * 2} hex digits, got {text!r}"
        ) from None
    if len(seed) != SEED_SIZE:
        raise argparse.ArgumentTypeError(f"a seed is {SEED_SIZE * 2} hex digits, got {len(text)}")
    return seed


def server_address(text: str) -> str:
    """``HOST:PORT``, a gRPC target, or several replicas' IPv4 ``HOST:PORT``s, comma-separated."""
    try:
        channel_target(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not text.strip():
        raise argparse.ArgumentTypeError("expected HOST:PORT, got nothing")
    return text
