"""The auditor and cancelled matches: a cancellation where the rules allow it audits clean, one
anywhere else fails at its seq, and a cancelled match's MatchInfo is checked too.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache

import pytest

from cardarena.clients.audit import CHECKS, audit_log
from cardarena.engine import new_match
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..logs import log_from_engine
from .audit_support import NAMES, SEED, Base, clone, forge, hexa

# -- cancelled matches -------------------------------------------------------------------------

CANCELLED = "cancelled by the operator: the room closes"


@cache
def cancelled_base(actions: int = 60) -> Base:
    """A Hexathlon cancelled after ``actions`` actions (every 11th a time-out), two seats
    reserved."""
    match = new_match("hexathlon", players=4, seed=SEED)
    rng = random.Random("cancelled")
    timed_out: list[int] = []
    for _ in range(actions):
        seat = match.to_act
        assert seat is not None
        if len(match.log) % 11 == 0:
            timed_out.append(len(match.log))
            match.apply(seat, match.default_action())
        else:
            match.apply(seat, rng.choice(match.legal_actions()))
    resp = log_from_engine(
        match,
        SEED,
        "cancelled",
        names=NAMES[:4],
        timed_out=timed_out,
        move_ms=500,
        reserved=[True, False, False, True],
        cancelled=CANCELLED,
    )
    return Base(match, resp)


def test_a_cancelled_match_audits_clean() -> None:
    b = cancelled_base()
    assert [e.WhichOneof("kind") for e in b.events()[-2:]] == ["match_cancelled", "seed_revealed"]
    assert not b.seqs("match_ended") and b.seqs("timed_out")
    report = audit_log(b.resp, head=b.resp.entries[-1].hash)
    assert report.ok, report.failure
    assert report.passed == [name for name, _ in CHECKS]
    assert report.totals == [str(t) for t in b.match.totals] and report.winners == []
    assert any(t != 0 for t in b.match.totals), "cancelled after some rounds were scored"


def test_a_match_cancelled_while_waiting_for_seats_audits_clean() -> None:
    match = new_match("triathlon", seed=SEED)
    resp = log_from_engine(
        match, SEED, "expired", seated={1}, cancelled="expired: seats still free after 3600 s"
    )
    assert [(s.taken, s.name) for s in resp.match.seats] == [
        (False, ""),
        (True, "seat 1"),
        (False, ""),
    ]
    report = audit_log(resp)
    assert report.ok, report.failure
    taken = clone(resp)
    taken.match.seats[0].taken = True
    report = audit_log(taken)
    assert report.failure is not None and (report.failure.check, report.failure.seq) == (
        "start",
        None,
    )
    assert "MatchInfo.seats[0].taken is True, the log says False" in report.failure.reason


def _kind_seqs(events: list[pb.Event], kind: str) -> list[int]:
    return [n for n, e in enumerate(events, start=1) if e.WhichOneof("kind") == kind]


def _cancel_followed_by_play() -> tuple[spb.GetMatchLogResponse, int]:
    b = cancelled_base()
    events = b.events()
    events[-3], events[-2] = events[-2], events[-3]  # the last event after the cancellation
    return forge(b, events), len(events) - 2


def _cancel_unrevealed() -> tuple[spb.GetMatchLogResponse, int]:
    b = cancelled_base()
    out = forge(b, b.events()[:-1])  # MatchInfo fixed to end at the cancellation
    return out, b.last - 1


def _cancel_twice() -> tuple[spb.GetMatchLogResponse, int]:
    b = cancelled_base()
    events = b.events()
    events.insert(-1, pb.Event.FromString(events[-2].SerializeToString()))
    return forge(b, events), len(events) - 1


def _cancel_in_an_ended_match(back: int) -> tuple[spb.GetMatchLogResponse, int]:
    """A finished match's log with MatchCancelled put in ``back`` events before its end."""
    b = hexa()
    events = b.events()
    events.insert(-back, pb.Event(match_cancelled=pb.MatchCancelled(reason=CANCELLED)))
    out = forge(b, events)
    out.match.cancelled = True
    return out, len(events) - back


def _cancel_after_the_end() -> tuple[spb.GetMatchLogResponse, int]:
    return _cancel_in_an_ended_match(1)


def _cancel_before_the_end() -> tuple[spb.GetMatchLogResponse, int]:
    return _cancel_in_an_ended_match(2)


@pytest.mark.parametrize(
    "build",
    [
        _cancel_followed_by_play,
        _cancel_unrevealed,
        _cancel_twice,
        _cancel_after_the_end,
        _cancel_before_the_end,
    ],
    ids=["followed by a play", "not revealed", "twice", "after MatchEnded", "before MatchEnded"],
)
def test_a_misplaced_match_cancelled_fails_at_its_seq(
    build: Callable[[], tuple[spb.GetMatchLogResponse, int]],
) -> None:
    out, seq = build()
    assert pb.Event.FromString(out.entries[seq - 1].event).WhichOneof("kind") == "match_cancelled"
    report = audit_log(out)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("reveal", seq), report.failure
    assert "MatchCancelled" in report.failure.reason


def test_a_cancellation_amid_an_action_s_consequences_fails_the_replay() -> None:
    b = hexa()
    events = b.events()
    k = b.seqs("trick_won")[5]  # the trick's last card is played, its winner not yet recorded
    cut = [*events[: k - 1], pb.Event(match_cancelled=pb.MatchCancelled()), events[-1]]
    out = forge(b, cut)
    out.match.cancelled = True
    report = audit_log(out)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("replay", k), report.failure


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("winners", lambda info: info.winners.append(0)),
        ("totals", lambda info: setattr(info.totals[1], "numerator", 999)),
        ("cancelled", lambda info: setattr(info, "cancelled", False)),
    ],
)
def test_a_cancelled_match_s_match_info_is_checked_too(
    field: str, change: Callable[[spb.MatchInfo], object]
) -> None:
    b = cancelled_base()
    out = clone(b.resp)
    change(out.match)
    report = audit_log(out)
    assert report.failure is not None
    check = "start" if field == "cancelled" else "result"
    assert (report.failure.check, report.failure.seq) == (check, b.last - 1), report.failure
    assert f"MatchInfo.{field} is" in report.failure.reason
