"""A tournament's duplicate groups as the embargo sees them: which group a match is in, how far
that group is, and which groups have ended, so that their results may be shown.

Why here: which matches form a group is the tournament's plan, which its director holds. A
match itself knows only that its seed deals other matches too and whether it has been
revealed (``HostedMatch.held_back``): that decides who may read it (``api.embargo``); this
says why, in words a reader can act on, and keeps the standings to what is public.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .director import Director


@dataclass(frozen=True)
class GroupProgress:
    """Where one match's duplicate group stands."""

    tournament_id: str
    group: int
    """Its number, from 0 (``TournamentMatch.group``)."""
    rotations: int
    """The matches the plan has in the group (every rotation of its lineup)."""
    ended: int
    """Those of them that have ended (played out or cancelled)."""
    stopped: bool
    """The tournament starts no more matches (its stop rule decided, or it is being
    cancelled): a group it cut short is revealed when the tournament ends."""
    kind: str = "tournament"
    """What ``tournament_id`` names, in the refusal's words: a tournament or a ladder."""


def group_progress(director: Director, match_id: str) -> GroupProgress | None:
    """Where ``match_id``'s group stands; ``None`` if the director has not (yet) found the
    match in its plan (a replica that only just began to follow the tournament)."""
    index = director.by_match.get(match_id)
    if index is None or index >= len(director.plans):
        return None
    group = director.plans.group_of(index)
    members = director.plans.members(group)
    return GroupProgress(
        tournament_id=director.tournament_id,
        group=group,
        rotations=len(members),
        ended=sum(1 for i in members if i in director.ended_matches),
        stopped=director.stopping is not None or director.ended,
    )


def shown_groups(director: Director) -> set[int] | None:
    """The groups whose results anyone may see (totals, winners, hashes, the standings made of
    them): the ended ones while the tournament runs; every one (``None``) once it has ended,
    since then no match of it is still to be played."""
    if director.ended:
        return None
    return director.complete_groups()
