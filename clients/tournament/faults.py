"""Faults of one bot, for one seat or summed over a tournament: what every report counts.

Plain data, kept apart from the guard that records them (:mod:`.guard`) because the results,
standings and reports read them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

NOTES_KEPT = 5


@dataclass
class Faults:
    """Faults of one bot, for one seat or summed over a tournament."""

    crashes: int = 0
    timeouts: int = 0
    illegal: int = 0
    late: int = 0
    fallbacks: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.crashes + self.timeouts + self.illegal + self.late

    def note(self, text: str) -> None:
        if len(self.notes) < NOTES_KEPT:
            self.notes.append(text)

    def add(self, other: Faults) -> None:
        self.crashes += other.crashes
        self.timeouts += other.timeouts
        self.illegal += other.illegal
        self.late += other.late
        self.fallbacks += other.fallbacks
        for text in other.notes:
            self.note(text)

    def as_dict(self) -> dict[str, Any]:
        return {
            "crashes": self.crashes,
            "timeouts": self.timeouts,
            "illegal": self.illegal,
            "late": self.late,
            "fallbacks": self.fallbacks,
            "notes": list(self.notes),
        }


def merge(faults: Sequence[Faults]) -> Faults:
    total = Faults()
    for item in faults:
        total.add(item)
    return total
