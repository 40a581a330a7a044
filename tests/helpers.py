"""Small drivers shared by the tests."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from cardarena.engine import Event, Match
from cardarena.server.hosting import Told
from cardarena.server.hosting.mailbox import Mailbox
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


def drain(queue: Mailbox[Any]) -> list[Any]:
    """Empty a reader's queue: its items in order, an event told with the turn after it as
    the two, event first (the order a client reads one message's parts in)."""
    items: list[Any] = []
    while not queue.empty():
        item = queue.get_nowait()
        if isinstance(item, Told):
            items.extend(part for part in (item.event, item.turn) if part is not None)
        else:
            items.append(item)
    return items


def unpacked(message: Any) -> list[Any]:
    """A stream message's parts in the order a client reads them: its kind (if one is set),
    then the turn it carries (if any)."""
    kind = message.WhichOneof("kind")
    parts = [] if kind is None else [getattr(message, kind)]
    if message.HasField("turn"):
        parts.append(message.turn)
    return parts


def drain_event_seqs(queue: Mailbox[Any]) -> list[int]:
    """Empty a reader's queue; the seqs of the events it held, in order (prompts and other
    items are dropped)."""
    return [item.seq for item in drain(queue) if isinstance(item, pb.Event)]


def fenced(text: str, language: str) -> list[str]:
    """The bodies of the ```` ```language ```` blocks of a Markdown ``text``, in order."""
    blocks: list[str] = re.findall(rf"```{language}\n(.*?)```", text, re.S)
    return blocks


def run_as_newcomer(script: str, cwd: Path, home: Path) -> list[str]:
    """A doc's shell lines run as a newcomer's shell would: a bare PATH and an empty HOME;
    what they printed, a line each (they must succeed)."""
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def run_python(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` (this interpreter) in ``cwd``, its output captured as text; the caller
    judges its exit status."""
    return subprocess.run(
        [sys.executable, *args],
        check=False,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
