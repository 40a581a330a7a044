"""What one tournament match produced: plain data shared by the runner, standings and reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from cardarena.competition import MatchPlan

from .faults import Faults


@dataclass
class MatchResult:
    """One planned match: its result, or the error that kept it from finishing.

    ``totals`` are the server's exact totals (``Fraction`` where Crazy Sixes shares a pool).
    A failed match (``error`` set) is left out of standings and ratings, and reported.
    """

    plan: MatchPlan
    bots: tuple[str, ...]
    match_id: str = ""
    totals: tuple[int | Fraction, ...] = ()
    winners: tuple[int, ...] = ()
    last_hash: bytes = b""
    """The hash of the log's last entry when the match ended: pins the log for an audit."""
    faults: tuple[Faults, ...] = ()
    seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and len(self.totals) == len(self.bots)

    @property
    def fault_count(self) -> int:
        return sum(f.total for f in self.faults)


@dataclass
class TournamentResult:
    """Everything a tournament reports, in schedule order."""

    game: str
    players: int
    lowest_wins: bool
    bots: list[str]
    matches: list[MatchResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[MatchResult]:
        return [m for m in self.matches if not m.ok]
