"""A tournament's standings, crosstable and summary claims, held to its audited logs.

Everything here follows from the logs, the revealed schedule and the game, so it is checked
with no key as with one: a file can be edited by anyone who drops its signature, and a server
signs whatever it likes. A figure the message says it has not got (``has_mean`` or
``has_interval`` false) must be absent from it too, and a figure it says it has must be the
logs': the readable file shows one or the other, and the signature covers both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cardarena.competition import Played, crosstable, standings
from cardarena.competition.schedule import PLANNED
from cardarena.engine.games import GAMES
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

if TYPE_CHECKING:
    from .tournament import TournamentAudit

TOLERANCE = 1e-9
"""How far a recomputed mean, interval or win share may differ (float sums in another order)."""

UNSTARTED_FIELDS = frozenset({"index", "group", "deal", "rotation", "entrants"})
"""What a planned match that never started lists: its place in the schedule, nothing more."""


def wrong_way_to_win(game: str, lowest_wins: bool) -> str | None:
    """Why ``lowest_wins`` is not ``game``'s, or ``None`` if it is (or the game is not this
    engine's: its logs' settings are then found wanting on their own). The standings and the
    board are recomputed by it, so a flipped one would rank the worst first unnoticed."""
    spec = GAMES.get(game)
    if spec is None or spec.lowest_wins == lowest_wins:
        return None
    return (
        f"says the {_total(lowest_wins)} total wins; {game} is won by the {_total(not lowest_wins)}"
    )


def check_claims(info: tpb.TournamentInfo, report: TournamentAudit) -> None:
    """What the message says beside the standings that the game and the schedule decide:
    which way the game is won (the standings are recomputed by it, so it must be the game's),
    how many planned matches started, that every started one ended and no unstarted one
    lists an outcome, and that a plan left unfinished was cut short by a cancellation or by
    the stop rule, not by a quiet omission."""
    wrong = wrong_way_to_win(info.game, info.lowest_wins)
    if wrong:
        report.find(f"the tournament {wrong}")
    started = [line for line in info.matches if line.match_id]
    if info.started != len(started):
        report.find(f"the tournament's started is {info.started}, it lists {len(started)}")
    for line in info.matches:
        if line.match_id and line.status != spb.MATCH_STATUS_ENDED:
            report.find(f"match {line.index} ({line.match_id}): listed as not ended")
        extra = {f.name for f, _ in line.ListFields()} - UNSTARTED_FIELDS
        if not line.match_id and extra:
            report.find(f"match {line.index}: never started, yet lists {sorted(extra)}")
    unstarted = len(info.matches) - len(started)
    ruled = info.HasField("stop") and info.sprt.verdict != ""
    if info.cancelled or ruled:
        report.on_its_word = "its cancellation" if info.cancelled else "its stop rule's verdict"
        return
    if info.end_reason != PLANNED:
        report.find(
            f"the tournament ended {info.end_reason!r}, neither cancelled nor by its stop rule"
        )
    if unstarted:
        report.find(
            f"{unstarted} planned matches never started, though the tournament was neither"
            " cancelled nor stopped by its rule"
        )


def check_standings(
    info: tpb.TournamentInfo, played: Sequence[Played], report: TournamentAudit
) -> None:
    """The published standings are the ones the audited logs give: one row per entrant, in
    the logs' order, every figure the logs'."""
    try:
        rows = standings(
            sorted(played, key=lambda p: p.index), info.entrants, lowest_wins=info.lowest_wins
        )
    except ValueError as error:  # a seat held by no entrant the tournament lists
        report.find(f"standings: cannot be recomputed: {error}")
        return
    ours = {s.entrant: s for s in rows}
    ranked = [row.entrant for row in info.standings]
    if sorted(ranked) != sorted(ours):
        report.find(f"standings: rows for {sorted(ranked)}, the entrants are {sorted(ours)}")
    elif ranked != [s.entrant for s in rows]:
        report.find(f"standings: ranked {ranked}, its logs rank {[s.entrant for s in rows]}")
    for row in info.standings:
        mine = ours.get(row.entrant)
        if mine is None:
            report.find(f"standings: {row.entrant!r} is no entrant")
            continue
        pairs = {
            "timeouts": (row.timeouts, mine.kinds.timeouts),
            "refused_actions": (row.refused_actions, mine.kinds.refused),
            "disconnects": (row.disconnects, mine.kinds.disconnects),
            "matches": (row.matches, mine.matches),
            "groups": (row.groups, mine.groups),
            "faults": (row.faults, mine.faults),
            "forfeits": (row.forfeits, mine.forfeits),
            "wins": (row.wins, mine.wins),
            **optional_figures(row, mean=mine.mean, ci_low=mine.ci_low, ci_high=mine.ci_high),
            "win_rate": (row.win_rate, mine.win_rate or 0.0),
            "mu": (row.mu, mine.rating.mu if mine.rating else 0.0),
            "sigma": (row.sigma, mine.rating.sigma if mine.rating else 0.0),
            "ordinal": (row.ordinal, mine.rating.ordinal if mine.rating else 0.0),
        }
        for name, (published, recomputed) in pairs.items():
            if not _same(published, recomputed):
                report.find(
                    f"standings: {row.entrant}'s {name} is {published}, its logs give {recomputed}"
                )
    _check_crosstable(info, played, report)


def _check_crosstable(
    info: tpb.TournamentInfo, played: Sequence[Played], report: TournamentAudit
) -> None:
    """The published crosstable is the one the audited logs give: every pair, in order."""
    pairs = crosstable(
        sorted(played, key=lambda p: p.index), info.entrants, lowest_wins=info.lowest_wins
    )
    if [(p.a, p.b) for p in info.crosstable] != [(p.a, p.b) for p in pairs]:
        report.find(f"crosstable: {len(info.crosstable)} pairs, not the {len(pairs)} its logs give")
        return
    for row, mine in zip(info.crosstable, pairs, strict=True):
        values = {
            "groups": (row.groups, mine.groups),
            **optional_figures(row, mean=mine.mean, ci_low=mine.ci_low, ci_high=mine.ci_high),
        }
        for name, (published, recomputed) in values.items():
            if not _same(published, recomputed):
                report.find(
                    f"crosstable: {row.a} against {row.b}: {name} is {published}, its logs"
                    f" give {recomputed}"
                )


Figure = tuple[float | None, float | None]


def optional_figures(
    row: tpb.Standing | tpb.Pairing, **recomputed: float | None
) -> dict[str, Figure]:
    """Each of a row's optional figures (its mean, its interval's ends) as published beside
    the logs' (``None``: the logs give none), and its flag beside whether the logs give one:
    a flag cleared over a figure left in place, or a figure left behind a cleared flag, is a
    difference like any other."""
    flags = {"mean": row.has_mean, "ci_low": row.has_interval, "ci_high": row.has_interval}
    figures: dict[str, Figure] = {
        "has_mean": (row.has_mean, recomputed["mean"] is not None),
        "has_interval": (row.has_interval, recomputed["ci_low"] is not None),
    }
    for name, value in recomputed.items():
        shown = getattr(row, name)
        figures[name] = (shown if flags[name] or shown != 0.0 else None, value)
    return figures


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _total(lowest: bool) -> str:
    return "lowest" if lowest else "highest"
