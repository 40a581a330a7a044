"""Tamperings of the faults and forfeits in a hosted log, each re-signed, with the check that
must fail, at which seq, and what its reason must say: forfeits dropped, early, counted
again or without a policy; refusals and disconnects where the rules allow none; MatchInfo.
"""

from __future__ import annotations

from collections.abc import Callable

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from .audit_faults_support import (
    Log,
    Tampered,
    _disconnect,
    _refusal,
    _timeout,
    changed,
    dropped,
    forge,
    inserted,
    next_action,
    tampering,
)


def _marked(log: Log, at: int, *, forfeited: bool, check: str, reason: str) -> Tampered:
    """The log with its TimedOut at ``at`` marked forfeited, or not, and re-signed: ``check``
    must fail there, saying ``reason``."""
    out = changed(log, at, lambda e: setattr(e.timed_out, "forfeited", forfeited))
    return out, check, at, reason


def _info_changed(log: Log, change: Callable[[spb.MatchInfo], object]) -> spb.GetMatchLogResponse:
    """The log, re-signed as it is, with its MatchInfo changed."""
    out = forge(log, log.events())
    change(out.match)
    return out


@tampering("a forfeit dropped after the time-out that brought it")
def _drop_forfeit(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("seat_forfeited")
    return dropped(log, at), "faults", at, "seat 1 reached 3 faults at seq"


@tampering("a forfeit dropped after the refusal that brought it")
def _drop_forfeit_refused(logs: dict[str, Log]) -> Tampered:
    log = logs["clockless"]
    (at,) = log.seqs("seat_forfeited")
    return dropped(log, at), "faults", at, "but no SeatForfeited follows it"


@tampering("a forfeit too early")
def _early_forfeit(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    first = log.seqs("seat_faulted", _refusal)[0]
    early = pb.Event(seat_forfeited=pb.SeatForfeited(seat=1, faults=3))
    return inserted(log, first + 1, early), "faults", first + 1, "forfeits after 1 of 3 faults"


@tampering("a forfeit with another count")
def _forfeit_count(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("seat_forfeited")
    out = changed(log, at, lambda e: setattr(e.seat_forfeited, "faults", 4))
    return out, "faults", at, "SeatForfeited says seat 1 has 4 faults; the log counts 3"


@tampering("a second forfeit")
def _forfeit_twice(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (first,) = log.seqs("seat_forfeited")
    at = log.seqs("timed_out", _timeout(1, forfeited=True))[0]  # between two of its moves
    again = pb.Event(seat_forfeited=pb.SeatForfeited(seat=1, faults=3))
    out = inserted(log, at, again)
    return out, "faults", at, f"seat 1 forfeits a second time (first at seq {first})"


@tampering("a forfeit without a fault policy")
def _no_policy(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("seat_forfeited")
    out = changed(log, 1, lambda e: setattr(e.match_started, "forfeit_after", 0))
    return out, "faults", at, "without a fault policy"


@tampering("a time-out marked forfeited for a seat that has not")
def _forfeited_timeout(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("timed_out", _timeout(0, forfeited=False))
    return _marked(
        log, at, forfeited=True, check="faults", reason="seat 0's time-out is marked forfeited"
    )


@tampering("a forfeited seat's time-out counted as a fault")
def _counted_timeout(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("timed_out", _timeout(1, forfeited=True))[0]
    return _marked(log, at, forfeited=False, check="faults", reason="seat 1 forfeited at seq")


@tampering("a forfeited seat acting without the server")
def _unplayed(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("timed_out", _timeout(1, forfeited=True))[0]
    return dropped(log, at), "faults", at, "follows no TimedOut marked forfeited"


@tampering("an unmarked time-out in a match without a clock")
def _clockless_timeout(logs: dict[str, Log]) -> Tampered:
    log = logs["clockless"]
    at = log.seqs("timed_out")[0]
    return _marked(
        log, at, forfeited=False, check="server", reason="a time-out in a match without a clock"
    )


@tampering("a refused action that was legal")
def _legal_refusal(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("seat_faulted", _refusal)[0]
    seat, action = next_action(log, at)  # bob's play after its refusal: legal then
    assert seat == 1

    def legal(event: pb.Event) -> None:
        event.seat_faulted.action.CopyFrom(codec.action_to_pb(action))

    return changed(log, at, legal), "faults", at, "is logged as refused, but the rules allow it"


@tampering("a second refusal in one turn")
def _second_refusal(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("seat_faulted", _refusal)[0]
    again = log.events()[at - 1]
    return inserted(log, at + 1, again), "faults", at + 1, f"(the first at seq {at})"


@tampering("a refusal of a seat not to act")
def _refusal_out_of_turn(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("seat_faulted", _refusal)[0]
    out = changed(log, at, lambda e: setattr(e.seat_faulted, "seat", 2))
    return out, "faults", at, "but seat 1 was to act"


@tampering("a fault in a match of no tournament")
def _no_tournament(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    out = changed(log, 1, lambda e: setattr(e.match_started, "tournament_id", ""))
    out.match.tournament_id = ""  # MatchInfo edited alike: only the faults give it away
    return out, "faults", log.seqs("seat_faulted")[0], "in a match of no tournament"


@tampering("a disconnect after the end")
def _late_disconnect(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (ended,) = log.seqs("match_ended")
    late = pb.Event(seat_faulted=pb.SeatFaulted(seat=0, kind=pb.FAULT_KIND_DISCONNECTED))
    return inserted(log, ended + 1, late), "faults", ended + 1, "after the match ended"


@tampering("a disconnect before every seat joined")
def _early_disconnect(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    last_join = log.seqs("seat_joined")[-1]
    early = pb.Event(seat_faulted=pb.SeatFaulted(seat=0, kind=pb.FAULT_KIND_DISCONNECTED))
    return inserted(log, last_join, early), "faults", last_join, "before seats [2] joined"


@tampering("a disconnect amid an action's events")
def _amid(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    won = log.seqs("trick_won")[5]  # the trick's last card is at won - 1
    amid = pb.Event(seat_faulted=pb.SeatFaulted(seat=2, kind=pb.FAULT_KIND_DISCONNECTED))
    return (
        inserted(log, won, amid),
        "faults",
        won,
        f"amid the events of the action at seq {won - 1}",
    )


@tampering("a fault of no known kind")
def _unknown_kind(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("seat_faulted", _disconnect(2))
    out = changed(log, at, lambda e: setattr(e.seat_faulted, "kind", pb.FAULT_KIND_UNSPECIFIED))
    return out, "faults", at, "has no known kind"


@tampering("a fault of a seat that forfeited")
def _fault_after_forfeit(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("timed_out", _timeout(1, forfeited=True))[0]
    fault = pb.Event(seat_faulted=pb.SeatFaulted(seat=1, kind=pb.FAULT_KIND_DISCONNECTED))
    return inserted(log, at, fault), "faults", at, "after it forfeited at seq"


@tampering("MatchInfo: another fault count")
def _info_faults(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("seat_faulted", _disconnect(2))
    out = _info_changed(log, lambda info: setattr(info.seats[2], "faults", 0))
    return out, "faults", at, "MatchInfo.seats[2].faults is 0, the log says 1"


@tampering("MatchInfo: a forfeit the log does not have")
def _info_forfeited(logs: dict[str, Log]) -> Tampered:
    out = _info_changed(logs["clocked"], lambda info: setattr(info.seats[0], "forfeited", True))
    return out, "faults", None, "MatchInfo.seats[0].forfeited is True, the log says False"


@tampering("MatchInfo: no forfeit where the log has one")
def _info_not_forfeited(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    (at,) = log.seqs("seat_forfeited")
    out = _info_changed(log, lambda info: setattr(info.seats[1], "forfeited", False))
    return out, "faults", at, f"the log says True (SeatForfeited at seq {at})"


@tampering("MatchInfo: another tournament")
def _info_tournament(logs: dict[str, Log]) -> Tampered:
    out = _info_changed(logs["clocked"], lambda info: setattr(info, "tournament_id", "t2"))
    return out, "start", 1, "MatchInfo.tournament_id is 't2', the log says 't1'"
