"""Small drivers shared by the tests."""

from __future__ import annotations

import asyncio
import random
from fractions import Fraction
from typing import Any

from cardarena.engine import Event, Match
from cardarena.v1 import game_pb2 as pb


def play_out(match: Match, rng_seed: int = 0, max_steps: int = 20_000) -> list[Event]:
    """Play ``match`` to the end with uniformly random legal actions; return its log."""
    rng = random.Random(rng_seed)
    for _ in range(max_steps):
        if match.over:
            return match.log
        seat = match.to_act
        assert seat is not None
        match.apply(seat, rng.choice(match.legal_actions()))
    raise AssertionError(f"match did not end in {max_steps} steps")


def actor(match: Match) -> int:
    """The seat to act, which the test expects there to be."""
    seat = match.to_act
    assert seat is not None, "nobody is to act"
    return seat


def fractions(*values: int) -> tuple[Fraction, ...]:
    return tuple(Fraction(v) for v in values)


def drain_event_seqs(queue: asyncio.Queue[Any]) -> list[int]:
    """Empty a reader's queue; the seqs of the events it held, in order (prompts and other
    items are dropped)."""
    seqs = []
    while not queue.empty():
        item = queue.get_nowait()
        if isinstance(item, pb.Event):
            seqs.append(item.seq)
    return seqs
