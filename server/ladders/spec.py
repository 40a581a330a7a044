"""What a ladder is asked to play, as plain data: checked once, kept as JSON in its row.

Entrant keys are kept only as hashes; the settings are what ``GetLadder`` shows, so nothing
secret is in them.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from cardarena.v1.clocks import TimeControl

VERSION = re.compile(r"[A-Za-z0-9._-]{1,32}")
"""A bot's version, as an entrant states it (EnterLadderRequest.version)."""


@dataclass(frozen=True)
class LadderSpec:
    name: str
    game: str
    players: int
    options: dict[str, Any]
    """Fully normalised, as the matches will have them."""
    entrants: tuple[str, ...]
    key_hashes: tuple[str, ...] = field(repr=False)
    concurrency: int
    forfeit_after: int
    lowest_wins: bool
    move_ms: int = 0
    bank_ms: int = 0
    increment_ms: int = 0
    round_ms: int = 0
    creator: str | None = field(default=None, repr=False)
    """Hex hash of the creator secret, if one was given."""

    @property
    def control(self) -> TimeControl:
        return TimeControl(self.move_ms, self.bank_ms, self.increment_ms, self.round_ms)

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> LadderSpec:
        data = json.loads(raw)
        return cls(
            **{**data, "entrants": tuple(data["entrants"]), "key_hashes": tuple(data["key_hashes"])}
        )


def player_name(entrant: str, version: str) -> str:
    """The board's name of an entrant at a version: ``name@version``, or the name alone."""
    return f"{entrant}@{version}" if version else entrant
