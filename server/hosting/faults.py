"""A match's fault policy and the faults counted against each seat, read from its log.

Why from the log: every fault is a logged event (a ``TimedOut``, a ``SeatFaulted``), so the
counts after a restart, on a follower and in an auditor are the same fold of the same
entries; nothing about faults lives only in memory. The policy is a match setting
(``forfeit_after``, hashed into ``MatchStarted``): after that many faults the seat forfeits
(``SeatForfeited``) and the server plays it by default actions to the end.

What counts: a time-out (not one played for a seat that had already forfeited), a refused
action by the seat to act at the current seq, and a disconnect of a tournament entrant: both
logged only in a tournament's matches, and at most once per seat and turn, so that a hostile
entrant can grow the log neither by sending nonsense nor by dropping its stream again and
again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cardarena.competition import FaultKinds
from cardarena.v1 import game_pb2 as pb


@dataclass
class SeatFaults:
    players: int
    forfeit_after: int = 0
    """0: faults are counted but never forfeit the match."""
    logged: bool = False
    """Whether refused actions and disconnects are logged as faults (tournament matches)."""
    counts: list[int] = field(default_factory=list)
    forfeited: list[bool] = field(default_factory=list)
    kinds: list[FaultKinds] = field(default_factory=list)
    """Each seat's faults by kind (the results' columns)."""
    faulted_this_turn: set[int] = field(default_factory=set)
    """Seats whose refused action or disconnect this turn is already logged."""

    def __post_init__(self) -> None:
        self.counts = [0] * self.players
        self.forfeited = [False] * self.players
        self.kinds = [FaultKinds()] * self.players

    def note(self, entry: pb.Event) -> None:
        """Fold one log entry into the counts."""
        kind = entry.WhichOneof("kind")
        if kind == "timed_out":
            if not entry.timed_out.forfeited:
                self.counts[entry.timed_out.seat] += 1
                self._add(entry.timed_out.seat, FaultKinds(timeouts=1))
            self.faulted_this_turn.clear()
        elif kind == "seat_faulted":
            fault = entry.seat_faulted
            self.counts[fault.seat] += 1
            self.faulted_this_turn.add(fault.seat)
            refused = fault.kind == pb.FAULT_KIND_REFUSED_ACTION
            self._add(fault.seat, FaultKinds(refused=refused, disconnects=not refused))
        elif kind == "seat_forfeited":
            self.forfeited[entry.seat_forfeited.seat] = True
        elif kind in ("card_played", "passed", "suit_excluded", "trump_chosen"):
            self.faulted_this_turn.clear()

    def _add(self, seat: int, kind: FaultKinds) -> None:
        if 0 <= seat < self.players:
            self.kinds[seat] += kind

    def forfeits_with_one_more(self, seat: int) -> bool:
        """Whether one more fault makes ``seat`` forfeit."""
        return (
            self.forfeit_after > 0
            and not self.forfeited[seat]
            and self.counts[seat] + 1 >= self.forfeit_after
        )

    def logs_refusal(self, seat: int) -> bool:
        return self.logged and not self.forfeited[seat] and seat not in self.faulted_this_turn

    def forfeit_event(self, seat: int) -> pb.SeatForfeited:
        return pb.SeatForfeited(seat=seat, faults=self.counts[seat] + 1)


CODE_KEPT = 8
"""Characters of a refused card's ``code`` kept in the log: every real code has at most
three ("10H"); the rest of a longer one is the sender's, not the game's."""


def as_recorded(action: pb.Action) -> pb.Action:
    """A malformed action as the log records it: its kind and numbers, and at most
    :data:`CODE_KEPT` characters of a card's code. Rebuilt field by field, so that nothing a
    client can make large (a long code, fields unknown to this server) reaches a log that
    every reader fetches and the server signs."""
    kind = action.WhichOneof("kind")
    if kind == "play":
        card = action.play
        return pb.Action(play=pb.Card(suit=card.suit, rank=card.rank, code=card.code[:CODE_KEPT]))
    if kind == "pass":
        passed = pb.Action()
        getattr(passed, "pass").SetInParent()  # `pass` is a Python keyword
        return passed
    if kind == "exclude_suit":
        return pb.Action(exclude_suit=action.exclude_suit)
    if kind == "choose_trump":
        return pb.Action(choose_trump=action.choose_trump)
    return pb.Action()
