"""Who plays which seat of which match, on which seed: duplicate groups in every rotation.

Why duplicate groups: in a card game most of the variance of one match is the cards. Playing
the same seed (hence the same cards through the fair-deal stream) once per cyclic rotation of
one lineup gives every entrant every hand of that deal, so the luck of the deal cancels out of
an entrant's mean over the rotations. One seed and one lineup, played in all its rotations, is
a *duplicate group*; standings take one sample per group (:mod:`.standings`).

The seeds follow docs/rules.md §4.9: the tournament seed is mixed with the entrants'
contributions (:func:`mixed_seed`), and group ``k`` plays every one of its matches on
:func:`group_seed` of that mixed seed, so that anyone holding the revealed tournament seed and
the contributions can recompute every deal of the tournament.

Lineups: with exactly as many entrants as seats there is one; with more, as the pairing design
says (:mod:`.pairings`: every combination of them, a balanced sample, or a gauntlet); with
fewer, the entrants are repeated in order to fill the seats.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar, overload

from cardarena.engine import mix_seed

from .pairings import EVERY, Design, Orders

PLANNED = "every planned match was played"
"""A tournament's end reason when it played its whole plan: the server writes it, and an
auditor holds a tournament that says it to having started every planned match."""

GROUP_LABEL = b"cardarena-group-v1"
T = TypeVar("T")


@dataclass(frozen=True)
class MatchPlan:
    """One match to play. ``index`` fixes its place in the schedule (ratings use that order,
    so they do not depend on which match happened to finish first)."""

    index: int
    group: int
    deal: int
    rotation: int
    seed: bytes
    seats: tuple[int, ...]
    """The entrant (an index into the tournament's entrants) at each seat."""


def group_seed(mixed: bytes, group: int) -> bytes:
    """The seed of every match of duplicate group ``group``:
    ``SHA-256("cardarena-group-v1" || mixed || uint64be(group))``."""
    if group < 0:
        raise ValueError(f"a group is counted from 0, got {group}")
    return hashlib.sha256(GROUP_LABEL + mixed + group.to_bytes(8, "big")).digest()


def mixed_seed(seed: bytes, contributions: Sequence[bytes | None]) -> bytes:
    """The tournament seed mixed with the entrants' contributions, in entrant order (``None``:
    that entrant gave none); the seed itself if nobody contributed. The same mixing as a
    match's deal seed (:func:`cardarena.engine.fairdeal.mix_seed`)."""
    return mix_seed(seed, contributions)


def bot_seed(master: bytes, index: int, seat: int) -> int:
    """The seed handed to a Python bot's constructor for one seat of one match."""
    digest = hashlib.sha256(master + f"/bot/{index}/{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def lineups(entrants: int, players: int) -> list[tuple[int, ...]]:
    """The lineups of every deal of the every-lineup design, in their fixed order."""
    if entrants < 1 or players < 1:
        raise ValueError(f"need entrants and players >= 1, got {entrants} and {players}")
    if entrants >= players:
        return list(itertools.combinations(range(entrants), players))
    return [tuple(seat % entrants for seat in range(players))]


def rotations(lineup: tuple[T, ...]) -> list[tuple[T, ...]]:
    """Every cyclic rotation: each entrant sits at each seat exactly once."""
    return [lineup[r:] + lineup[:r] for r in range(len(lineup))]


class Schedule(Sequence[MatchPlan]):
    """Every match of a tournament, deal by deal, group by group, lineup by lineup, rotation by
    rotation, made on demand from its index: a plan of 100,000 matches costs nothing until a
    match is asked for, and one match costs one group's lineups.

    Group ``k`` is the ``k``-th group of the design (:mod:`.pairings`) in deal order; all its
    matches share ``group_seed(mixed, k)``, and no two groups share a seed. A group's matches
    are consecutive: group ``k`` holds the indices ``members(k)``.
    """

    def __init__(
        self,
        mixed: bytes,
        *,
        deals: int,
        entrants: int,
        players: int,
        design: Design = EVERY,
    ) -> None:
        design.check(entrants, players)
        if deals < 0:
            raise ValueError(f"deals must be at least 0, got {deals}")
        self.mixed, self.deals, self.entrants, self.players = mixed, deals, entrants, players
        self.design = design
        self.per_deal = design.groups_per_deal(entrants, players)
        self.group_size = design.group_size(entrants, players)
        self.groups = deals * self.per_deal
        self._cached: tuple[int, list[MatchPlan]] = (-1, [])
        self._orders = Orders(design, mixed, entrants=entrants, players=players)

    def __len__(self) -> int:
        return self.groups * self.group_size

    @overload
    def __getitem__(self, index: int) -> MatchPlan: ...
    @overload
    def __getitem__(self, index: slice) -> list[MatchPlan]: ...
    def __getitem__(self, index: int | slice) -> MatchPlan | list[MatchPlan]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"match {index} is not in a plan of {len(self)}")
        return self.group(index // self.group_size)[index % self.group_size]

    def __iter__(self) -> Iterator[MatchPlan]:
        for group in range(self.groups):
            yield from self.group(group)

    def group_of(self, index: int) -> int:
        return index // self.group_size

    def members(self, group: int) -> range:
        """The plan indices of group ``group``'s matches."""
        return range(group * self.group_size, (group + 1) * self.group_size)

    def group(self, group: int) -> list[MatchPlan]:
        """Group ``group``'s matches (the last one asked for is kept: a director and a page
        of match lines ask for a group's matches one after another)."""
        if self._cached[0] == group:
            return self._cached[1]
        if not 0 <= group < self.groups:
            raise IndexError(f"group {group} is not in a plan of {self.groups}")
        deal, number = divmod(group, self.per_deal)
        seed = group_seed(self.mixed, group)
        first = group * self.group_size
        plans = [
            MatchPlan(first + offset, group, deal, rotation, seed, seats)
            for offset, (rotation, seats) in enumerate(
                (rotation, seats)
                for lineup in self.design.lineups(
                    self._orders(deal), number, entrants=self.entrants, players=self.players
                )
                for rotation, seats in enumerate(rotations(lineup))
            )
        ]
        self._cached = (group, plans)
        return plans


def schedule(
    mixed: bytes, *, deals: int, entrants: int, players: int, design: Design = EVERY
) -> Schedule:
    """Every match of the tournament (:class:`Schedule`)."""
    return Schedule(mixed, deals=deals, entrants=entrants, players=players, design=design)
