"""The audit's faults check: every fault, forfeit and forfeited seat's move as the policy says.

A match's fault policy is in its hashed MatchStarted: ``forfeit_after`` (0: never forfeit)
and ``tournament_id`` (only a tournament's matches log refused actions and disconnects). The
faults of a seat are a fold of its log, the same fold the server makes (its time-outs that
were not played for a forfeited seat, plus its SeatFaulted entries), so an outsider can
recount them and hold each entry to the rules of docs/protocol.md, "Faults and forfeits":

* a refused action is the seat to act's, once per turn at most, and really refused by the
  rules at that point (a malformed action is refused too); a disconnect is logged while the
  match runs; neither outside a tournament, after the end, or for a seat that has forfeited;
* a seat forfeits (SeatForfeited) exactly once, immediately after the fault that brought its
  count to ``forfeit_after``, and only under a policy;
* from then on the server plays it: each of its actions follows a TimedOut marked
  ``forfeited`` (that no other seat's time-out may carry), and is no fault.

The server check (before this one) has already held every time-out to the seat to act and
its default action, so here only the faults are judged. MatchInfo's ``faults`` and
``forfeited`` of each seat are the fold's at the end.

Why the rules are followed only for some logs: the match's state is needed to judge a
SeatFaulted (the seat to act, what the rules refuse, whether the match is over) or a
SeatForfeited (the end, and no such entry amid an action's consequences, which only the
rules count). A log without either has nothing for the state to judge (its time-outs are
counted from the entries alone), and the replay check has already followed the rules through
it, so the walk does not play it a second time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from cardarena.engine import Match, describe
from cardarena.engine import events as ev
from cardarena.engine.errors import ActionError
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from .errors import Discrepancy, mismatch

TURN_ENDS: Final = frozenset(
    {"timed_out", "card_played", "passed", "suit_excluded", "trump_chosen"}
)
"""The entries that end a turn (an action applied, or played for the seat): a seat may have a
refused action logged again after one of them."""

ENDS: Final = frozenset({"match_ended", "match_cancelled", "seed_revealed"})
JUDGED: Final = frozenset({"seat_faulted", "seat_forfeited"})
"""The entries that only the match's state can judge."""
FOLDED: Final = frozenset({"seat_joined", "timed_out", *ENDS})
"""The entries a walk without the rules takes (see :meth:`FaultWalk.walk`)."""
FAULT_KINDS: Final = {
    pb.FAULT_KIND_REFUSED_ACTION: "refused action",
    pb.FAULT_KIND_DISCONNECTED: "disconnect",
}


class FaultWalk:
    """The faults of one log, entry by entry, raising :class:`Discrepancy` at the first entry
    that breaks the policy."""

    def __init__(self, started: pb.MatchStarted, opening: ev.MatchStarted, seed: bytes) -> None:
        self._opening, self._seed = opening, seed
        self._match: Match | None = None
        self.players = started.players
        self.limit = started.forfeit_after
        self.tournament = started.tournament_id
        self.joined: set[int] = set()
        self.counts = [0] * self.players
        self.last_fault: list[int | None] = [None] * self.players
        self.forfeited_at: list[int | None] = [None] * self.players
        self.refused: dict[int, int] = {}
        """Seats whose refused action this turn is logged, with its seq."""
        self.due: tuple[int, int] | None = None
        """(seq, seat) of the fault that brought the seat to the limit: a SeatForfeited is due."""
        self.played_for: int | None = None
        """The seat of the last TimedOut, until its action: the server played that one."""
        self.owed = 0
        """Entries still to come of the last action's consequences (a fault cannot sit there)."""
        self.action_at = 0
        self.ended: int | None = None
        self.playing = True
        """Whether the walk follows the rules (see the module): only a log with an entry the
        match's state judges needs it."""

    @property
    def match(self) -> Match:
        """The match as the rules have it at this entry: made (and dealt) only when a walk
        needs it, which a log with nothing for it to judge never does."""
        if self._match is None:
            self._match = Match(self._opening, seed=self._seed)
        return self._match

    def walk(
        self,
        kinds: list[str | None],
        decoded: list[ev.Event | None],
        event: Callable[[int], pb.Event],
        seqs_of: Callable[[str], list[int]],
    ) -> None:
        """Take the entries of a log: ``kinds`` and ``decoded`` are each entry's kind and
        engine event, ``event(n)`` the message of entry ``n`` (from 1), ``seqs_of(kind)``
        the seqs of the entries of ``kind`` (of the JUDGED and FOLDED kinds)."""
        self.playing = any(seqs_of(kind) for kind in JUDGED)
        if self.playing:
            for n, (kind, engine_event) in enumerate(zip(kinds, decoded, strict=True), 1):
                self.take(n, kind, engine_event, event)
            return
        # Nothing for the state to judge: the other entries change nothing of the fold (no
        # action is followed, no refused action can be logged), so only these are taken, and
        # the entry after a fault that reached the limit (where a SeatForfeited is due).
        last = 0
        for n in sorted(n for kind in FOLDED for n in seqs_of(kind)):
            if n <= last:
                continue  # taken already, as the entry after a fault that reached the limit
            self.take(n, kinds[n - 1], decoded[n - 1], event)
            last = n
            while self.due is not None and last < len(kinds):
                last += 1
                self.take(last, kinds[last - 1], decoded[last - 1], event)

    def take(
        self,
        n: int,
        kind: str | None,
        decoded: ev.Event | None,
        event: Callable[[int], pb.Event],
    ) -> None:
        if self.due is not None and kind != "seat_forfeited":
            at, seat = self.due
            raise Discrepancy(
                n,
                f"seat {seat} reached {self.limit} faults at seq {at} (MatchStarted.forfeit_after "
                f"{self.limit}), but no SeatForfeited follows it",
            )
        if kind in ("seat_faulted", "seat_forfeited") and self.owed:
            raise Discrepancy(
                n, f"a {kind} entry amid the events of the action at seq {self.action_at}"
            )
        if decoded is not None and self.owed:
            self.owed -= 1
        if kind == "seat_joined":
            self.joined.add(event(n).seat_joined.seat)
        elif kind == "timed_out":
            self._timed_out(n, event(n).timed_out)
        elif kind == "seat_faulted":
            self._faulted(n, event(n).seat_faulted)
        elif kind == "seat_forfeited":
            self._forfeited(n, event(n).seat_forfeited)
        elif kind in ENDS and self.ended is None:
            self.ended = n
        recorded = (
            self.match.recorded_action(decoded) if decoded is not None and self.playing else None
        )
        if recorded is not None:
            self._acted(n, *recorded)
        if kind in TURN_ENDS:
            self.refused.clear()

    # -- entries ---------------------------------------------------------------------------

    def _timed_out(self, n: int, timed_out: pb.TimedOut) -> None:
        seat = timed_out.seat  # the seat to act: the server check holds
        forfeited = self.forfeited_at[seat]
        self.played_for = seat  # its action is the server's (the time-out that forfeits too)
        if timed_out.forfeited:
            if forfeited is None:
                raise Discrepancy(
                    n,
                    f"seat {seat}'s time-out is marked forfeited (played at once, no fault), "
                    "but the seat has not forfeited",
                )
        elif forfeited is not None:
            raise Discrepancy(
                n,
                f"seat {seat} forfeited at seq {forfeited}: its time-out must be marked "
                "forfeited (played at once, no fault), not counted as a fault",
            )
        else:
            self._count(n, seat)

    def _faulted(self, n: int, fault: pb.SeatFaulted) -> None:
        seat = fault.seat
        what = FAULT_KINDS.get(fault.kind)
        if seat >= self.players:
            raise Discrepancy(n, f"SeatFaulted names seat {seat}: there is no such seat")
        if what is None:
            raise Discrepancy(n, f"seat {seat}'s SeatFaulted has no known kind ({fault.kind})")
        if not self.tournament:
            raise Discrepancy(
                n,
                f"seat {seat}'s {what} is logged as a fault in a match of no tournament "
                "(MatchStarted.tournament_id is empty): only a tournament's matches log them",
            )
        self._while_running(n, seat, f"seat {seat}'s {what}")
        if fault.kind == pb.FAULT_KIND_REFUSED_ACTION:
            self._refused(n, seat, fault.action)
        self._count(n, seat)

    def _refused(self, n: int, seat: int, action: pb.Action) -> None:
        to_act = self.match.to_act
        if seat != to_act:
            raise Discrepancy(
                n,
                f"seat {seat}'s action is logged as refused, but seat {to_act} was to act "
                "(only the seat to act has its refused actions logged)",
            )
        first = self.refused.get(seat)
        if first is not None:
            raise Discrepancy(
                n,
                f"a second refused action of seat {seat} in one turn (the first at seq {first}): "
                "at most one is logged per seat and turn",
            )
        legal = _allowed(self.match, seat, action)
        if legal is not None:
            raise Discrepancy(
                n,
                f"seat {seat}'s action {describe(legal)} is logged as refused, but the rules "
                f"allow it here (legal: {' '.join(map(describe, self.match.legal_actions()))})",
            )
        self.refused[seat] = n

    def _forfeited(self, n: int, forfeit: pb.SeatForfeited) -> None:
        seat = forfeit.seat
        if seat >= self.players:
            raise Discrepancy(n, f"SeatForfeited names seat {seat}: there is no such seat")
        if not self.limit:
            raise Discrepancy(
                n,
                f"seat {seat} forfeits in a match without a fault policy "
                "(MatchStarted.forfeit_after is 0)",
            )
        self._not_over(n, f"seat {seat}'s forfeit")
        first = self.forfeited_at[seat]
        if first is not None:
            raise Discrepancy(n, f"seat {seat} forfeits a second time (first at seq {first})")
        if self.due is None or self.due[1] != seat:
            raise Discrepancy(
                n,
                f"seat {seat} forfeits after {self.counts[seat]} of {self.limit} faults, not "
                f"immediately after the fault that brought it to {self.limit} "
                "(MatchStarted.forfeit_after)",
            )
        if forfeit.faults != self.limit:
            raise Discrepancy(
                n,
                f"SeatForfeited says seat {seat} has {forfeit.faults} faults; the log counts "
                f"{self.counts[seat]} (forfeit_after {self.limit})",
            )
        self.forfeited_at[seat], self.due = n, None

    def _acted(self, n: int, seat: int, action: int) -> None:
        forfeited = self.forfeited_at[seat]
        if forfeited is not None and self.played_for != seat:
            raise Discrepancy(
                n,
                f"seat {seat} forfeited at seq {forfeited}, so the server plays it, but its "
                f"{describe(action)} follows no TimedOut marked forfeited",
            )
        self.played_for = None
        try:
            self.owed = len(self.match.apply(seat, action)) - 1
        except ActionError as error:  # the replay check makes this unreachable
            raise Discrepancy(n, str(error)) from None
        self.action_at = n

    # -- the fold --------------------------------------------------------------------------

    def _count(self, n: int, seat: int) -> None:
        self.counts[seat] += 1
        self.last_fault[seat] = n
        if self.limit and self.counts[seat] == self.limit:
            self.due = (n, seat)

    def _not_over(self, n: int, what: str) -> None:
        if self.ended is not None or self.match.over:
            end = f"seq {self.ended}" if self.ended is not None else f"seq {self.action_at}"
            raise Discrepancy(n, f"{what} comes after the match ended ({end})")

    def _while_running(self, n: int, seat: int, what: str) -> None:
        self._not_over(n, what)
        if len(self.joined) < self.players:
            missing = sorted(set(range(self.players)) - self.joined)
            raise Discrepancy(n, f"{what} comes before seats {missing} joined: nothing ran yet")
        forfeited = self.forfeited_at[seat]
        if forfeited is not None:
            raise Discrepancy(
                n,
                f"{what} comes after it forfeited at seq {forfeited}: the server plays a "
                "forfeited seat, which cannot fault",
            )

    # -- MatchInfo -------------------------------------------------------------------------

    def check_info(self, info: spb.MatchInfo) -> None:
        """Each seat's ``faults`` and ``forfeited`` against the fold.

        A MatchInfo that counts no fault at all, of a match without a policy (forfeit_after
        0, no tournament), is one from before fault counts (or a listed summary that does
        not count them): nothing then turns on a fault, and it is taken as it is."""
        seats = sorted(info.seats, key=lambda s: s.seat)
        uncounted = not any(s.faults or s.forfeited for s in seats)
        if uncounted and not self.limit and not self.tournament:
            return
        for seat in seats:
            s = seat.seat
            if seat.faults != self.counts[s]:
                at = self.last_fault[s]
                last = f" (the last at seq {at})" if at is not None else ""
                raise mismatch(f"seats[{s}].faults", seat.faults, f"{self.counts[s]}{last}", at)
            forfeited = self.forfeited_at[s]
            if seat.forfeited != (forfeited is not None):
                says = f"True (SeatForfeited at seq {forfeited})" if forfeited else "False"
                raise mismatch(f"seats[{s}].forfeited", seat.forfeited, says, forfeited)


def _allowed(match: Match, seat: int, action: pb.Action) -> int | None:
    """The engine action ``action`` is, if the rules would apply it for ``seat`` now (tried
    on a copy); ``None`` if they refuse it, a malformed action included."""
    try:
        decoded = codec.action_from_pb(action)
    except (ValueError, ArithmeticError):
        return None
    try:
        match.clone().apply(seat, decoded)
    except ActionError:
        return None
    return decoded
