"""A ladder: a competition that never ends. Its board, kept match by match, and the rule that
picks who plays next.

Why incremental: a ladder plays for days, so its board cannot be recomputed from every match at
each change, nor keep every match in memory. It is folded from the *settled prefix* of its
matches, in index order (a match counts once every match before it has ended or been voided),
one match at a time: OpenSkill ratings (:func:`~.ratings.rate_one`), and per player the mean
score per duplicate group with its Student-t interval from running sums (Welford's). The
server that keeps the board and the auditor that recomputes a signed snapshot fold the same
matches in the same order with this code, so they agree to the bit.

A *player* is an entrant at one version (``name@version``, or the name alone): a new version
starts afresh, and the old one stays on the board, retired.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from openskill.models import PlackettLuce, PlackettLuceRating

from .ratings import Rating, rate_one
from .results import FaultKinds, Played, group_means, scored
from .stats import t_quantile

LEVEL = 0.95


@dataclass
class Row:
    """One player's line on the board."""

    player: str
    matches: int = 0
    groups: int = 0
    wins: float = 0.0
    faults: int = 0
    forfeits: int = 0
    kinds: FaultKinds = field(default_factory=FaultKinds)
    last_index: int = -1
    """The index of its last counted match."""
    _n: int = 0
    _mean: float = 0.0
    _m2: float = 0.0

    def add_group_mean(self, value: float) -> None:
        """One more sample (its mean over a duplicate group), Welford's update."""
        self._n += 1
        delta = value - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (value - self._mean)
        self.groups = self._n

    @property
    def mean(self) -> float | None:
        return self._mean if self._n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% t-interval of the mean over groups (none below two groups)."""
        if self._n < 2:
            return None
        half = t_quantile(0.5 + LEVEL / 2, self._n - 1) * math.sqrt(self._m2 / (self._n - 1))
        half /= math.sqrt(self._n)
        return self._mean - half, self._mean + half


class Board:
    """The board of a ladder whose groups are ``group_size`` consecutive matches, folded from
    its matches in index order (:meth:`add`)."""

    def __init__(self, *, lowest_wins: bool, group_size: int) -> None:
        self.lowest_wins = lowest_wins
        self.group_size = group_size
        self.counted = 0
        """Matches folded so far (the settled prefix's length)."""
        self.voided = 0
        """Of them, those counted for nothing (voided or cancelled)."""
        self.rows: dict[str, Row] = {}
        self._model = PlackettLuce()
        self._ratings: dict[str, PlackettLuceRating] = {}
        self._group: list[Played] = []

    def add(self, played: Played | None) -> None:
        """Fold match ``self.counted`` (``None``: voided or cancelled, counted for nothing)."""
        index = self.counted
        if played is not None:
            if played.index != index:
                raise ValueError(f"match {played.index} folded where match {index} is due")
            self._fold(played)
            self._group.append(played)
        else:
            self.voided += 1
        self.counted += 1
        if self.counted % self.group_size == 0:  # the group is complete: one sample each
            means = group_means(self._group, lowest_wins=self.lowest_wins)
            for player, groups in means.items():
                for value in groups.values():
                    self.rows[player].add_group_mean(value)
            self._group = []

    def _fold(self, match: Played) -> None:
        for player in match.entrants:
            if player not in self.rows:
                self.rows[player] = Row(player)
                self._ratings[player] = self._model.rating(name=player)
        rate_one(self._model, self._ratings, match, lowest_wins=self.lowest_wins)
        for seat in scored(match, lowest_wins=self.lowest_wins):
            row = self.rows[seat.entrant]
            row.wins += seat.win_share
            row.forfeits += seat.forfeited
            if match.faults:
                row.faults += match.faults[seat.seat]
            if match.kinds:
                row.kinds += match.kinds[seat.seat]
        for player in dict.fromkeys(match.entrants):
            row = self.rows[player]
            row.matches += 1
            row.last_index = match.index

    def rating(self, player: str) -> Rating | None:
        rating = self._ratings.get(player)
        return None if rating is None else Rating(rating.mu, rating.sigma)

    def ranked(self) -> list[Row]:
        """Best first by the conservative rating (mu - 3 sigma), then by name."""
        return sorted(self.rows.values(), key=lambda r: (-self._ordinal(r.player), r.player))

    def _ordinal(self, player: str) -> float:
        rating = self.rating(player)
        return -math.inf if rating is None else rating.ordinal


def split_player(player: str, entrants: Sequence[str]) -> tuple[str, str]:
    """``(entrant, version)`` of a board name (an entrant's name may hold ``@`` itself)."""
    if player in entrants:
        return player, ""
    entrant, _, version = player.rpartition("@")
    return entrant, version


def fold(matches: Iterable[Played | None], *, lowest_wins: bool, group_size: int) -> Board:
    """The board of ``matches``, the ladder's matches from index 0 in order (``None`` for one
    voided or cancelled): what an auditor recomputes from a snapshot's logs."""
    board = Board(lowest_wins=lowest_wins, group_size=group_size)
    for played in matches:
        board.add(played)
    return board


@dataclass(frozen=True)
class Candidate:
    """A player who may be seated in a new group now: connected, with room to play."""

    player: str
    scheduled: int
    """Matches scheduled for it so far (played, running or waiting)."""
    ordinal: float
    """Its rating's conservative estimate (mu - 3 sigma) on the board now."""


def next_lineup(
    candidates: Sequence[Candidate], met: Mapping[frozenset[str], int], players: int
) -> tuple[str, ...] | None:
    """Who plays the next duplicate group, or ``None`` if fewer than ``players`` may.

    The player with the fewest matches scheduled goes first (ties: by name). Then, seat by
    seat, the candidate with the fewest groups scheduled, then the one whose pairs with those
    chosen have met least (summed), then the one nearest in rating to the first, then by
    name: shares first (every connected player's stays within a few groups of the others'),
    then new pairings before repeats, close ratings before mismatches. Deterministic, so a test (and an
    operator reading the log) can tell why each group was made."""
    if len(candidates) < players:
        return None
    pool = sorted(candidates, key=lambda c: (c.scheduled, c.player))
    chosen = [pool.pop(0)]
    while len(chosen) < players:

        def cost(c: Candidate) -> tuple[int, int, float, str]:
            meetings = sum(met.get(frozenset((c.player, o.player)), 0) for o in chosen)
            behind = c.scheduled // players  # groups scheduled: shares before pairings
            return behind, meetings, abs(c.ordinal - chosen[0].ordinal), c.player

        best = min(pool, key=cost)
        pool.remove(best)
        chosen.append(best)
    return tuple(c.player for c in chosen)
