"""What a finished match counts for: its seats' scores, ranks and win shares, forfeits applied.

Every statistic of a competition (standings, ratings, the crosstable, the SPRT) reads a match
through :func:`scored`, so the forfeit rule is written once and the server's live standings
and a client's report of the same matches cannot disagree.

The forfeit rule (a tournament's fault policy ``forfeit_after: N`` decides who forfeited): a
forfeited seat is ranked last in that match (rank = number of seats; several forfeiters share
it), gets no share of the win, and its score for statistics is the worst total at the table
(the minimum; the maximum when the lowest total wins), so that forfeiting is never better than
playing on and losing. The win goes to the rules' winners that did not forfeit, 1/k each; if
every winner forfeited, to the best of the seats that did not (by total, ties sharing); if
every seat forfeited, to nobody. A match whose rules declared no winner gives no win.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class FaultKinds:
    """A seat's (or an entrant's) faults by kind, as the logs show them: time-outs (not the
    server's moves for a seat that had already forfeited), refused actions and disconnects."""

    timeouts: int = 0
    refused: int = 0
    disconnects: int = 0

    def __add__(self, other: FaultKinds) -> FaultKinds:
        return FaultKinds(
            self.timeouts + other.timeouts,
            self.refused + other.refused,
            self.disconnects + other.disconnects,
        )


@dataclass(frozen=True)
class Played:
    """One finished match of a tournament, as the server reports it."""

    index: int
    """The plan index (:class:`~.schedule.MatchPlan`): ratings go in this order."""
    group: int
    """The duplicate group: standings take one sample per group."""
    entrants: tuple[str, ...]
    """The entrant's name at each seat."""
    totals: tuple[int | Fraction, ...]
    winners: tuple[int, ...]
    """The seats the game's rules declared winners."""
    faults: tuple[int, ...] = ()
    """Faults per seat (``()``: none)."""
    forfeited: tuple[bool, ...] = ()
    """Whether each seat forfeited (``()``: none did)."""
    kinds: tuple[FaultKinds, ...] = ()
    """Each seat's faults by kind (``()``: not known)."""

    def __post_init__(self) -> None:
        seats = len(self.entrants)
        if len(self.totals) != seats:
            raise ValueError(f"match {self.index}: {len(self.totals)} totals for {seats} seats")
        for name in ("faults", "forfeited", "kinds"):
            given = len(getattr(self, name))
            if given not in (0, seats):
                raise ValueError(f"match {self.index}: {given} {name} for {seats} seats")
        if any(not 0 <= w < seats for w in self.winners):
            raise ValueError(f"match {self.index}: winners {self.winners} are not seats")


@dataclass(frozen=True)
class Scored:
    """One seat's counted result."""

    seat: int
    entrant: str
    score: float
    """The total, or for a forfeited seat the worst total at the table."""
    rank: int
    """1 is best; ties share the better rank; forfeited seats share the last."""
    win_share: float
    forfeited: bool


def scored(played: Played, *, lowest_wins: bool) -> list[Scored]:
    """Each seat of ``played`` as the statistics count it, forfeits applied (module doc)."""
    seats = len(played.entrants)
    forfeited = played.forfeited or (False,) * seats
    totals = played.totals
    worst = max(totals) if lowest_wins else min(totals)
    sign = 1 if lowest_wins else -1
    playing = [s for s in range(seats) if not forfeited[s]]
    rank = dict.fromkeys(range(seats), seats)
    for s in playing:
        rank[s] = 1 + sum(sign * totals[o] < sign * totals[s] for o in playing)
    winners = [s for s in dict.fromkeys(played.winners) if not forfeited[s]]
    if played.winners and not winners:
        winners = [s for s in playing if rank[s] == 1]
    share = 1 / len(winners) if winners else 0.0
    return [
        Scored(
            seat=s,
            entrant=played.entrants[s],
            score=float(worst if forfeited[s] else totals[s]),
            rank=rank[s],
            win_share=share if s in winners else 0.0,
            forfeited=forfeited[s],
        )
        for s in range(seats)
    ]


def group_means(played: Iterable[Played], *, lowest_wins: bool) -> dict[str, dict[int, float]]:
    """Each entrant's mean scored score in each duplicate group it played, groups in order.

    The one sample per group that standings and the crosstable take: the matches of a group
    share their cards, so they are not independent samples, but an entrant's mean over the
    group is one, and in it the luck of the deal has cancelled out. Scores are averaged in
    (match index, seat) order, so the means do not depend on the order of ``played``.
    """
    scores: dict[str, dict[int, list[tuple[int, int, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for match in played:
        for seat in scored(match, lowest_wins=lowest_wins):
            scores[seat.entrant][match.group].append((match.index, seat.seat, seat.score))
    return {
        entrant: {
            group: statistics.fmean(score for _, _, score in sorted(values))
            for group, values in sorted(groups.items())
        }
        for entrant, groups in scores.items()
    }


def known(played: Iterable[Played], entrants: Sequence[str]) -> list[Played]:
    """``played`` as a list, after checking that every seat holds one of ``entrants``."""
    names = set(entrants)
    matches = list(played)
    for match in matches:
        strangers = sorted(set(match.entrants) - names)
        if strangers:
            raise ValueError(f"match {match.index}: unknown entrants {', '.join(strangers)}")
    return matches
