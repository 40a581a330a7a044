"""Who plays which seat of which deal: duplicate deals with every rotation of the seats.

Why duplicate deals: in a card game most of the variance of one match is the cards. Playing
the same deal (the same seed, hence the same cards through the fair-deal stream) once per
cyclic rotation of the seats gives every bot every hand of that deal, so the luck of the deal
cancels out of a bot's average over the rotations. One seed and one lineup, played in all its
rotations, is a *duplicate group*; standings take one sample per group (see
:mod:`.standings`).

Lineups: with exactly as many bots as seats there is one; with more bots, every combination
of them (each bot meets every set of rivals equally often); with fewer, the bots are repeated
in order to fill the seats.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass


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
    """The bot (index into the tournament's bots) at each seat."""


def deal_seed(master: bytes, deal: int) -> bytes:
    """The seed of deal ``deal``: derived, so a tournament is reproducible from its one seed."""
    return hashlib.sha256(master + f"/deal/{deal}".encode()).digest()


def bot_seed(master: bytes, index: int, seat: int) -> int:
    """The seed handed to a Python bot's constructor for one seat of one match."""
    digest = hashlib.sha256(master + f"/bot/{index}/{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def lineups(bots: int, players: int) -> list[tuple[int, ...]]:
    if bots >= players:
        return list(itertools.combinations(range(bots), players))
    return [tuple(seat % bots for seat in range(players))]


def rotations(lineup: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cyclic rotation: each bot sits at each seat exactly once."""
    return [lineup[r:] + lineup[:r] for r in range(len(lineup))]


def schedule(master: bytes, *, deals: int, bots: int, players: int) -> list[MatchPlan]:
    """Every match of the tournament, deal by deal, lineup by lineup, rotation by rotation."""
    plans: list[MatchPlan] = []
    groups = lineups(bots, players)
    for deal in range(deals):
        seed = deal_seed(master, deal)
        for number, lineup in enumerate(groups):
            group = deal * len(groups) + number
            for rotation, seats in enumerate(rotations(lineup)):
                plans.append(MatchPlan(len(plans), group, deal, rotation, seed, seats))
    return plans
