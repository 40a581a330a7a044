"""What a tournament is asked to play, as plain data: checked once, kept as JSON in its row.

Entrant keys are kept only as hashes; the settings are what ``GetTournament`` shows, so
nothing secret is in them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from cardarena.competition import EVERY_LINEUP, Design
from cardarena.v1.clocks import TimeControl

DEFAULT_FORFEIT_AFTER = 3
DEFAULT_CONCURRENCY = 4
DEFAULT_ENTRY_MS = 60_000
MAX_ENTRY_MS = 3_600_000


@dataclass(frozen=True)
class Sprt:
    """The stop rule: "is ``a`` better than ``b``", H0 mean advantage ``d0``, H1 ``d1``."""

    a: str
    b: str
    alpha: float
    beta: float
    d0: float
    d1: float


@dataclass(frozen=True)
class TournamentSpec:
    """A tournament as it was asked for and checked: the game, the entrants, the schedule
    and the rules of faults and stopping."""

    name: str
    game: str
    players: int
    options: dict[str, Any]
    """Fully normalised (every default filled in), as the matches will have them."""
    move_ms: int
    entrants: tuple[str, ...]
    key_hashes: tuple[str, ...] = field(repr=False)
    """Hex hashes of the entrants' keys, in entrant order."""
    deals: int
    concurrency: int
    forfeit_after: int
    """0: the fallback policy (faults are counted, never forfeit)."""
    lowest_wins: bool
    sprt: Sprt | None = None
    creator: str | None = field(default=None, repr=False)
    """Hex hash of the creator secret, if one was given."""
    entry_ms: int = DEFAULT_ENTRY_MS
    """The longest the first match waits for every entrant to enter (and contribute)."""
    pairing: str = EVERY_LINEUP
    """The pairing design (``cardarena.competition.pairings``); a row from before designs
    existed has none: every lineup, as it was played."""
    candidates: int = 0
    """A gauntlet's: the first entrants that are candidates."""
    bank_ms: int = 0
    increment_ms: int = 0
    round_ms: int = 0
    """The rest of the clock beside ``move_ms`` (``TimeControl``); 0: off."""

    @property
    def control(self) -> TimeControl:
        return TimeControl(self.move_ms, self.bank_ms, self.increment_ms, self.round_ms)

    @property
    def design(self) -> Design:
        return Design(self.pairing, self.candidates)

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> TournamentSpec:
        data = json.loads(raw)
        sprt = data.pop("sprt")
        return cls(
            **{
                **data,
                "entrants": tuple(data["entrants"]),
                "key_hashes": tuple(data["key_hashes"]),
                "sprt": None if sprt is None else Sprt(**sprt),
            }
        )
