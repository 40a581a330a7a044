"""Misbehaving contestants for the tournament tests.

As Python classes: a bot that raises on every third decision and one that answers an illegal
action every other turn. Run as a program (``python tournament_bots.py``), a bot speaking the
line protocol that says it is ready and then never answers a turn.
"""

from __future__ import annotations

import json
import sys
import threading

from cardarena.clients.bots import SeatState


class Scripted:
    """A bot built the way the launcher builds every bot (``Bot(seed)``: the seed is not
    used here), counting its decisions, which is what each misbehaviour keys on."""

    def __init__(self, seed: int | None = None) -> None:
        self.calls = 0


class Crasher(Scripted):
    name = "crasher"

    def choose(self, state: SeatState) -> int:
        self.calls += 1
        if self.calls % 3 == 0:
            raise ZeroDivisionError("a bug in the bot")
        return state.legal[-1]


class IllegalMover(Scripted):
    name = "illegal"

    def choose(self, state: SeatState) -> int:
        self.calls += 1
        return 999 if self.calls % 2 else state.legal[0]


class Sleeper(Scripted):
    """Hangs on its second decision until released (a stuck thread for the guard's unit test, a
    seat that times out for good in a local match)."""

    name = "sleeper"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.release = threading.Event()

    def choose(self, state: SeatState) -> int:
        self.calls += 1
        if self.calls == 2:
            self.release.wait(30)
        return state.legal[0]


def hang() -> None:
    """Say hello and ready, then read turns forever without answering."""
    for line in sys.stdin:
        kind = json.loads(line)["type"]
        if kind in ("hello", "start"):
            print(json.dumps({"hello" if kind == "hello" else "ready": True}), flush=True)


class Slow(Scripted):
    """Thinks a little before its first legal action: matches last long enough to be seen."""

    name = "slow"

    def choose(self, state: SeatState) -> int:
        threading.Event().wait(0.02)
        return state.legal[0]


class FirstLegal(Scripted):
    """Deterministic: the first legal action, always."""

    name = "first"

    def choose(self, state: SeatState) -> int:
        return state.legal[0]


class LastLegal(Scripted):
    """Deterministic: the last legal action, always."""

    name = "last"

    def choose(self, state: SeatState) -> int:
        return state.legal[-1]


if __name__ == "__main__":
    hang()
