"""The runner's results ranked by the competition's rules, with the runner's own fault detail.

Why here and not in :mod:`cardarena.competition`: the rules count a finished match
(:class:`~cardarena.competition.Played`) and a number of faults per seat; the runner knows
more, the kind of every fault and the faults of matches that never finished, and its reports
show both. So :func:`played` is the one adapter from a :class:`~.outcomes.MatchResult` to the
rules, and :class:`BotStanding` is the rules' row with that detail beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from cardarena.competition import Played, Standing, standings

from .faults import Faults, merge
from .outcomes import MatchResult, TournamentResult


def played(result: MatchResult) -> Played:
    """A finished match as the rules count it: faults per seat are the guard's totals; the
    runner has no forfeits (its fault policy is to play on with the fallback move)."""
    plan = result.plan
    return Played(
        index=plan.index,
        group=plan.group,
        entrants=result.bots,
        totals=result.totals,
        winners=result.winners,
        faults=tuple(f.total for f in result.faults) if result.faults else (),
        forfeited=(),
    )


@dataclass(frozen=True)
class BotStanding(Standing):
    """A standing whose ``faults`` also count the matches that failed (as the runner's reports
    always have), with their kinds in ``fault_kinds``."""

    fault_kinds: Faults = field(default_factory=Faults)


def rank(result: TournamentResult) -> list[BotStanding]:
    """Standings and ratings of the finished matches; faults of every match."""
    finished = [played(m) for m in result.matches if m.ok]
    kinds = {bot: merge(_faults_of(result, bot)) for bot in result.bots}
    return [
        _with_kinds(row, kinds[row.entrant])
        for row in standings(finished, result.bots, lowest_wins=result.lowest_wins)
    ]


def _with_kinds(row: Standing, kinds: Faults) -> BotStanding:
    """The rules' row with the runner's detail: its faults are all of them, the failed
    matches' too, and their kinds."""
    rules = {f.name: getattr(row, f.name) for f in fields(row)}
    return BotStanding(**(rules | {"faults": kinds.total}), fault_kinds=kinds)


def _faults_of(result: TournamentResult, bot: str) -> list[Faults]:
    return [
        faults
        for match in result.matches
        for name, faults in zip(match.bots, match.faults, strict=False)
        if name == bot
    ]
