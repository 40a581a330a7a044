"""Which entrants sit down together: the pairing designs of a tournament, as data.

Every design makes *duplicate groups*: one seed, played by the group's lineups in every cyclic
rotation of their seats, so that each entrant sits at each seat equally often and the luck of
the deal cancels out of its mean. They differ in which lineups they make (docs/tournaments.md,
"Pairings", with test vectors):

* ``every_lineup``: every combination of ``players`` entrants, once per deal. Every entrant
  meets every set of rivals equally often, but the count grows as C(n, players): 4,845
  lineups for 20 entrants at 4 seats.
* ``balanced``: each deal (a *round*) seats the entrants around a circle and makes one group
  of every ``players`` neighbours (n windows of the circle): every entrant plays ``players``
  groups a round, each round's circle is chosen so that pairs meet about equally often
  (:class:`Orders`), and the matches grow linearly with the entrants.
* ``gauntlet``: the first ``candidates`` entrants against the others (the field), as engine
  testers run: each deal shuffles the field and cuts it into lineups of ``players - 1``; a
  group is one such lineup's deal played by every candidate in every rotation, so candidates
  are compared on the same cards against the same opponents.

The shuffles are the fair-deal stream's (docs/rules.md §4.1-4.3), read from the mixed
tournament seed under the labels ``balanced/<d>`` and ``gauntlet/<d>``, so anyone holding
the revealed seed recomputes every lineup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cardarena.engine import RandomStream

EVERY_LINEUP = "every_lineup"
BALANCED = "balanced"
GAUNTLET = "gauntlet"
KINDS = (EVERY_LINEUP, BALANCED, GAUNTLET)


@dataclass(frozen=True)
class Design:
    """A pairing design: its ``kind`` and, for a gauntlet, how many of the first entrants are
    the ``candidates`` (the rest are the field)."""

    kind: str = EVERY_LINEUP
    candidates: int = 0

    def check(self, entrants: int, players: int) -> None:
        """Raise ValueError, naming the problem, if ``entrants`` cannot be paired so."""
        if self.kind not in KINDS:
            raise ValueError(f"pairing must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if entrants < 1 or players < 1:
            raise ValueError(f"need entrants and players >= 1, got {entrants} and {players}")
        if self.kind != GAUNTLET:
            if self.candidates:
                raise ValueError(f"candidates are a gauntlet's, not {self.kind}'s")
            return
        if players < 2:
            raise ValueError("a gauntlet needs at least 2 seats: a candidate and the field")
        if not 1 <= self.candidates <= entrants - (players - 1):
            raise ValueError(
                f"a gauntlet of {players} seats needs 1..{entrants - players + 1} candidates"
                f" (the first entrants) and a field of at least {players - 1} (the rest),"
                f" got {self.candidates} candidates of {entrants} entrants"
            )

    def groups_per_deal(self, entrants: int, players: int) -> int:
        if self.kind == GAUNTLET:
            return math.ceil((entrants - self.candidates) / (players - 1))
        if entrants <= players:
            return 1
        if self.kind == BALANCED:
            return entrants
        return math.comb(entrants, players)

    def group_size(self, entrants: int, players: int) -> int:
        """Matches per group: every rotation of each of its lineups."""
        return players * (self.candidates if self.kind == GAUNTLET else 1)

    def lineups(
        self, order: Sequence[int], number: int, *, entrants: int, players: int
    ) -> list[tuple[int, ...]]:
        """The lineups of group ``number`` of a deal whose ``order`` (:class:`Orders`) is
        given (each lineup then played in every rotation): one, or a gauntlet's one per
        candidate, in candidate order."""
        if self.kind == GAUNTLET:  # the last lineup of the field is filled from its start
            field = entrants - self.candidates
            start = number * (players - 1)
            rivals = tuple(order[(start + i) % field] for i in range(players - 1))
            return [(candidate, *rivals) for candidate in range(self.candidates)]
        if entrants < players:  # too few: repeated in order to fill the seats
            return [tuple(seat % entrants for seat in range(players))]
        if entrants == players:
            return [tuple(range(players))]
        if self.kind == BALANCED:
            return [tuple(order[(number + i) % entrants] for i in range(players))]
        return [combination(entrants, players, number)]


class Orders:
    """Each deal's order of the entrants: a gauntlet's shuffled field, a balanced round's
    circle (none for every lineup).

    A balanced round's circle is built from a shuffle of the entrants (label
    ``balanced/<d>``): its first entrant starts the circle; then, again and again, of the
    entrants not yet placed, in shuffled order, the first one with the fewest groups shared so
    far with the last ``players - 1`` placed (summed over them) is placed next. The round's
    groups then count for every pair in them. Independent shuffles would make pairs meet
    equally often only in expectation (over 40 rounds of 32 entrants at 3 seats some pairs
    never met and some 19 times; built so, every pair met 6 to 10 times). Each round depends
    on those before it, so the circles are made in order and kept (the largest plan, 64
    entrants at 3 seats, takes about 1.5 s, once).
    """

    def __init__(self, design: Design, mixed: bytes, *, entrants: int, players: int) -> None:
        self.design, self.mixed, self.entrants, self.players = design, mixed, entrants, players
        self._circles: list[list[int]] = []
        self._met: dict[tuple[int, int], int] = {}
        self._field: tuple[int, list[int]] = (-1, [])

    def __call__(self, deal: int) -> list[int]:
        if self.design.kind == GAUNTLET:
            if self._field[0] != deal:
                field = range(self.design.candidates, self.entrants)
                self._field = (deal, shuffled(self.mixed, f"gauntlet/{deal}", field))
            return self._field[1]
        if self.design.kind != BALANCED or self.entrants <= self.players:
            return []
        while len(self._circles) <= deal:
            self._next_round()
        return self._circles[deal]

    def _next_round(self) -> None:
        met, tail_length = self._met, self.players - 1
        order = shuffled(self.mixed, f"balanced/{len(self._circles)}", range(self.entrants))
        circle, left = order[:1], order[1:]
        while left:
            tail = circle[-tail_length:]
            best, fewest = 0, -1
            for position, entrant in enumerate(left):
                shared = sum(met.get((min(entrant, e), max(entrant, e)), 0) for e in tail)
                if fewest < 0 or shared < fewest:
                    best, fewest = position, shared
                    if shared == 0:
                        break
            circle.append(left.pop(best))
        n, p = self.entrants, self.players
        for start in range(n):
            lineup = sorted(circle[(start + i) % n] for i in range(p))
            for a in range(p):
                for b in range(a + 1, p):
                    pair = (lineup[a], lineup[b])
                    met[pair] = met.get(pair, 0) + 1
        self._circles.append(circle)


EVERY = Design()


def shuffled(seed: bytes, label: str, items: range) -> list[int]:
    """``items`` shuffled by the fair-deal stream ``(seed, label)`` (docs/rules.md §4.3)."""
    return RandomStream(seed, label).shuffle(list(items))


def combination(n: int, k: int, rank: int) -> tuple[int, ...]:
    """The ``rank``-th ``k``-combination of ``range(n)`` in lexicographic order (the order of
    ``itertools.combinations``), without listing those before it."""
    if not 0 <= rank < math.comb(n, k):
        raise ValueError(f"rank must be 0..{math.comb(n, k) - 1}, got {rank}")
    chosen: list[int] = []
    x = 0
    while len(chosen) < k:
        # How many combinations start with x at this position.
        count = math.comb(n - x - 1, k - len(chosen) - 1)
        if rank < count:
            chosen.append(x)
        else:
            rank -= count
        x += 1
    return tuple(chosen)
