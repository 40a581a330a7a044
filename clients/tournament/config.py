"""What a tournament is asked to play: the server, the game, the contestants and the limits.

Plain settings, shared by the runner, the command line and the main job; the one derived
value is the runner's time per decision, which follows the server's time control.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .botspec import BotEntry

DEFAULT_DECISION_MS = 10_000
MOVE_GRACE_MS = 500


@dataclass(frozen=True, kw_only=True)
class TournamentSettings:
    """What any tournament of this machine's bots is asked, whether it runs from here
    (:class:`TournamentConfig`) or the server hosts it (``launcher.HostedConfig``): the server,
    the game, the bots, the table, the pace. One definition, so the two cannot drift; by keyword
    only, so that where a field is declared never matters to a caller."""

    address: str
    game: str
    bots: Sequence[BotEntry]
    players: int = 0
    """0: as many as there are bots if the game allows it, else the game's default."""
    deals: int = 2
    concurrency: int = 4
    bot_logs: Path | None = None
    operator_token: str | None = None
    """The server's operator token, for a server that needs one to create matches."""


@dataclass(frozen=True, kw_only=True)
class TournamentConfig(TournamentSettings):
    """A tournament run from here (the runner schedules, scores and plays every seat)."""

    options: dict[str, Any] = field(default_factory=dict)
    move_ms: int = 0
    decision_ms: int = 0
    """0: ``move_ms`` plus a grace when there is a time control, else 10 s."""
    seed: bytes = bytes(32)

    @property
    def decision_s(self) -> float:
        if self.decision_ms > 0:
            return self.decision_ms / 1000
        if self.move_ms > 0:
            return (self.move_ms + MOVE_GRACE_MS) / 1000
        return DEFAULT_DECISION_MS / 1000


class TournamentError(Exception):
    """The tournament cannot run at all (unknown game, bad player count, no server)."""
