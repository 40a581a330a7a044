"""A match's time control: the per-move clock, each seat's bank (as in chess: base plus
increment) and its budget per round (as the ACPC dealer's per hand). Here, beside the
messages, because the server that keeps the time and the auditor that checks it must fold the
log the same way.

Why the log decides: what a seat has left is folded from the log's entries (each seat action
carries the time the server charged, ``Event.think_ms``, and every ``RoundStarted`` renews
the round budgets), so the owner, a replica that follows it, a process that resumes it after
``kill -9`` and the auditor all arrive at the same banks from the same bytes. The time of the
turn in progress when the server went away is never charged: the turn starts again, with the
seat's bank as the log left it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cardarena.v1 import game_pb2 as pb

MAX_CLOCK_MS = 3_600_000
"""The longest of each part of a time control, in milliseconds."""
ACTION_KINDS = frozenset({"card_played", "passed", "suit_excluded", "trump_chosen"})
"""The entries that can be a seat's own action (and carry the time it took)."""


@dataclass(frozen=True)
class TimeControl:
    """``move_ms`` per move, a bank of ``bank_ms`` plus ``increment_ms`` per action in time,
    ``round_ms`` per round; 0: that clock is off."""

    move_ms: int = 0
    bank_ms: int = 0
    increment_ms: int = 0
    round_ms: int = 0

    @property
    def timed(self) -> bool:
        """Whether any clock ends a turn."""
        return bool(self.move_ms or self.bank_ms or self.round_ms)

    def check(self) -> TimeControl:
        """Itself, or ValueError naming the field out of range."""
        for name in ("move_ms", "bank_ms", "increment_ms", "round_ms"):
            value = getattr(self, name)
            if not 0 <= value <= MAX_CLOCK_MS:
                raise ValueError(f"time_control.{name} must be 0..{MAX_CLOCK_MS}, got {value}")
        if self.increment_ms and not self.bank_ms:
            raise ValueError("time_control.increment_ms adds to a bank: set bank_ms too")
        return self

    def settings(self) -> dict[str, int]:
        """The match's stored settings: ``move_ms`` always, the others only when in force,
        so that the settings of matches from before banks compare equal."""
        extra = {"bank_ms": self.bank_ms, "increment_ms": self.increment_ms}
        extra["round_ms"] = self.round_ms
        return {"move_ms": self.move_ms, **{k: v for k, v in extra.items() if v}}

    @classmethod
    def from_settings(cls, config: dict[str, Any]) -> TimeControl:
        return cls(
            move_ms=int(config.get("move_ms", 0)),
            bank_ms=int(config.get("bank_ms", 0)),
            increment_ms=int(config.get("increment_ms", 0)),
            round_ms=int(config.get("round_ms", 0)),
        )

    @classmethod
    def of_message(cls, control: Any) -> TimeControl:
        """As a MatchStarted or a TimeControl message states it."""
        return cls(control.move_ms, control.bank_ms, control.increment_ms, control.round_ms)


class SeatClocks:
    """What each seat has left of its bank and of its round budget, folded from the log."""

    def __init__(self, control: TimeControl, seats: int) -> None:
        self.control = control
        self.bank = [control.bank_ms] * seats
        self.round = [control.round_ms] * seats

    def allowance_ms(self, seat: int) -> int | None:
        """How long ``seat``'s turn may last: the least of the clocks in force (``None``:
        untimed)."""
        control = self.control
        limits = [
            limit
            for limit, on in (
                (control.move_ms, control.move_ms),
                (self.bank[seat], control.bank_ms),
                (self.round[seat], control.round_ms),
            )
            if on
        ]
        return min(limits) if limits else None

    def fold(self, entry: pb.Event) -> None:
        """Account for one log entry (every entry, in order)."""
        kind = entry.WhichOneof("kind")
        if kind == "round_started":
            self.round = [self.control.round_ms] * len(self.round)
        elif not entry.HasField("think_ms"):
            return
        elif kind == "timed_out":
            self._charge(entry.timed_out.seat, entry.think_ms, in_time=False)
        elif kind in ACTION_KINDS:
            self._charge(getattr(entry, kind).seat, entry.think_ms, in_time=True)

    def _charge(self, seat: int, used_ms: int, *, in_time: bool) -> None:
        if not 0 <= seat < len(self.bank):
            return
        if self.control.bank_ms:
            self.bank[seat] = max(0, self.bank[seat] - used_ms)
            if in_time:
                self.bank[seat] = min(MAX_CLOCK_MS, self.bank[seat] + self.control.increment_ms)
        if self.control.round_ms:
            self.round[seat] = max(0, self.round[seat] - used_ms)
