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

Lineups: with exactly as many entrants as seats there is one; with more, every combination of
them (each entrant meets every set of rivals equally often); with fewer, the entrants are
repeated in order to fill the seats.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from cardarena.engine import mix_seed

GROUP_LABEL = b"cardarena-group-v1"


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
    """The sets of entrants that sit down together, in a fixed order."""
    if entrants < 1 or players < 1:
        raise ValueError(f"need entrants and players >= 1, got {entrants} and {players}")
    if entrants >= players:
        return list(itertools.combinations(range(entrants), players))
    return [tuple(seat % entrants for seat in range(players))]


def rotations(lineup: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cyclic rotation: each entrant sits at each seat exactly once."""
    return [lineup[r:] + lineup[:r] for r in range(len(lineup))]


def schedule(mixed: bytes, *, deals: int, entrants: int, players: int) -> list[MatchPlan]:
    """Every match of the tournament, deal by deal, lineup by lineup, rotation by rotation.

    Group ``k`` is the ``k``-th (deal, lineup) pair in that order; all its rotations share
    ``group_seed(mixed, k)``, and no two groups share a seed.
    """
    plans: list[MatchPlan] = []
    groups = lineups(entrants, players)
    for deal in range(deals):
        for number, lineup in enumerate(groups):
            group = deal * len(groups) + number
            seed = group_seed(mixed, group)
            for rotation, seats in enumerate(rotations(lineup)):
                plans.append(MatchPlan(len(plans), group, deal, rotation, seed, seats))
    return plans
