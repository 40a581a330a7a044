"""Who may read a match of a duplicate group that is still being played (docs/rules.md §4.10).

Why: every rotation of a tournament's duplicate group is dealt the same cards, and in a trick
game every card is played, so a spectator of one rotation learns the hands of the others:
all of them once the first has ended (one match at a time), or as they are played (several
at once). So until the group's last match has ended (its tournament then reveals the group's
seed, and :attr:`~..hosting.HostedMatch.held_back` turns false), whatever shows the match's
cards or what its hands made is for its own seats (by their tokens) and the operator only:
WatchMatch, GetMatch and GetMatchLog refuse everyone else with FAILED_PRECONDITION, saying
which group holds the match back and how far it is; lists keep the match but clear its
totals, winners and last seq (the log's length). Its last hash is the operator's alone, its
own seats' too: the chain commits to the deal, hands and all (trying each way the unseen cards
could lie against the hash finds them), and every rotation of the group is dealt the same
cards. This is the one place the rule is applied: each reader's handler asks it (JoinMatch's
answer too, :meth:`Embargo.seated`). The tournament's own lists apply the same rule to its
lines and standings (``tournaments.info``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cardarena.v1 import service_pb2 as spb

from ..errors import HeldBack
from ..hosting import HostedMatch
from ..tournaments.groups import GroupProgress
from .access import Guard
from .requests import credential
from .status import Context

GroupOf = Callable[[HostedMatch], Awaitable[GroupProgress | None]]
"""Where a tournament's match stands in its duplicate group (the tournaments' registry)."""


class Embargo:
    """The rule, asked by every handler that shows a match's cards or results."""

    def __init__(self, guard: Guard, group_of: GroupOf | None = None) -> None:
        self.guard = guard
        self.group_of = group_of

    def may_read(self, hosted: HostedMatch, context: Context) -> bool:
        """Whether the caller may read ``hosted`` whole now: anyone once its group has ended;
        before that, a seat of this very match (its token) or the operator."""
        if not hosted.held_back or self.guard.is_operator(context):
            return True
        token = credential(context)
        return token is not None and hosted.seat_of(token) is not None

    async def check(self, hosted: HostedMatch, context: Context) -> None:
        """Refuse (:class:`HeldBack`) a caller who may not read ``hosted`` now."""
        if not self.may_read(hosted, context):
            raise await self.refusal(hosted)

    async def refusal(self, hosted: HostedMatch) -> HeldBack:
        """Why ``hosted`` is held back, in words a reader can act on."""
        progress = None if self.group_of is None else await self.group_of(hosted)
        return HeldBack(held_back_message(hosted, progress))

    def listed(
        self, hosted: HostedMatch | None, info: spb.MatchInfo, context: Context
    ) -> spb.MatchInfo:
        """``info`` as this caller may see it while the match is held back (``hosted``: the
        match if in memory; ``None``: read from its stored record, ended but its seed not yet
        revealed, so held back from all but the operator: its seats' tokens are checked by the
        match alone): without its totals, winners and last seq unless the caller may read
        the match, and without its last hash unless the caller is the operator. The hash
        commits to the deal, which the group's other rotations are still playing: its own
        seats could test their guesses of the hands against it. The last seq is the log's
        length, which the hands made too (how many cards were drawn, how soon someone went
        out): a seat of another rotation of the deal must not learn it before the group has
        ended. A match not held back is shown as it is."""
        if hosted is not None and not hosted.held_back:
            return info
        operator = self.guard.is_operator(context)
        if not operator:
            info.last_hash = b""
        if not (operator if hosted is None else self.may_read(hosted, context)):
            del info.totals[:]
            del info.winners[:]
            info.last_seq = 0
        return info

    def seated(self, hosted: HostedMatch, info: spb.MatchInfo, context: Context) -> spb.MatchInfo:
        """``info`` for a caller that holds a seat of ``hosted`` (JoinMatch's answer): whole
        but for its last hash while the match is held back, which is the operator's alone.
        (The match may end between JoinMatch's check that it runs and its answer: a seat
        joining again with its own token as its last card is played.)"""
        if hosted.held_back and not self.guard.is_operator(context):
            info.last_hash = b""
        return info


def held_back_message(hosted: HostedMatch, progress: GroupProgress | None) -> str:
    if progress is None:
        return (
            f"match {hosted.match_id} belongs to a duplicate group of tournament"
            f" {hosted.tournament_id}: readable once every rotation of its group has ended"
        )
    where = (
        f"match {hosted.match_id} belongs to duplicate group {progress.group} of"
        f" {progress.kind} {progress.tournament_id}"
    )
    total, ended = progress.rotations, progress.ended
    if ended >= total:
        return (
            f"{where}: all {total} of its rotations have ended and its seed is being revealed:"
            " readable in a moment"
        )
    if progress.stopped:
        return (
            f"{where}: {ended} of its {total} rotations have ended and the tournament starts no"
            " more matches: readable once the tournament has ended"
        )
    has = "has" if ended == 1 else "have"
    return f"{where}: readable once all {total} of its rotations have ended ({ended} {has})"
