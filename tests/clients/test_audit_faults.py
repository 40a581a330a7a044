"""The auditor's faults check, on logs the real hosting layer writes under a fault policy.

Two tournament matches are hosted in-process (an Arena over SQLite) with seats that send
refused actions, let the clock play for them, disconnect and forfeit; their stored logs and
MatchInfo audit clean. Each tampering below is then re-signed (every hash recomputed, so the
chain holds) and must fail on the check it names, at the seq it names: only the rules of
docs/protocol.md, "Faults and forfeits", can tell.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cardarena.clients.audit import CHECKS, audit_log
from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.clients.logs.text import server_event_text
from cardarena.clients.replay import build_timeline
from cardarena.engine import Match
from cardarena.engine import events as ev
from cardarena.engine.actions import MAX_ACTION, is_action
from cardarena.engine.errors import ActionError, IllegalAction, MalformedAction
from cardarena.server.api.info import match_info
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.store import SqliteStore
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

from ..waiting import eventually

SEED = bytes(range(32))
NAMES = ("ann", "bob", "cy")

Plan = Callable[[int, int], str]
"""(seat, its turn from 1) -> what it does: "play", "wait" (for the clock), "illegal",
"illegal twice", "malformed", "disconnect" (then play)."""


def clocked_plan(seat: int, turn: int) -> str:
    """bob: refused, refused twice in one turn, then a time-out: three faults, a forfeit.
    ann: a time-out, then a malformed action. cy: a disconnect."""
    return {
        (1, 1): "illegal",
        (1, 2): "illegal twice",
        (1, 3): "wait",
        (0, 2): "wait",
        (0, 3): "malformed",
        (2, 1): "disconnect",
    }.get((seat, turn), "play")


def clockless_plan(seat: int, turn: int) -> str:
    """cy refuses in two turns and forfeits; no clock, so the server plays it at once."""
    return "illegal" if seat == 2 and turn <= 2 else "play"


def refused(match: Match, seat: int, error: type[ActionError]) -> int:
    """The first action the rules refuse ``seat`` now with ``error``."""
    for action in range(MAX_ACTION + 1):
        if not is_action(action):
            continue
        try:
            match.clone().apply(seat, action)
        except error:
            return action
        except ActionError:
            continue
    raise AssertionError(f"no action is refused with {error.__name__}")


async def host(
    store: SqliteStore, plan: Plan, *, move_ms: int, forfeit_after: int, tournament_id: str
) -> spb.GetMatchLogResponse:
    hosted = await Arena(store).create(
        "triathlon",
        3,
        {},
        move_ms=move_ms,
        seed=SEED,
        forfeit_after=forfeit_after,
        tournament_id=tournament_id,
    )
    for name in NAMES:
        await hosted.join(None, name)
    turns = [0] * 3
    while True:
        async with hosted.lock:  # between writes (the clock's too)
            ended, seat = hosted.ended, hosted.engine.to_act
            info, seq = match_info(hosted), hosted.last_seq
        if ended:
            break
        assert seat is not None
        if info.seats[seat].forfeited:  # the server plays it at once
            await _moved(hosted, seq, "the forfeited seat's move")
        else:
            turns[seat] += 1
            await _act(hosted, seat, plan(seat, turns[seat]))
    stored = await store.read_events(hosted.match_id)
    entries = [spb.LogEntry(seq=s.seq, event=s.payload, hash=s.hash) for s in stored]
    return spb.GetMatchLogResponse(match=info, entries=entries, seed=hosted.record.seed)


async def _moved(hosted: HostedMatch, seq: int, what: str) -> None:
    """Until the server writes past ``seq`` (its clock, or its move for a forfeited seat)."""
    await eventually(lambda: hosted.last_seq > seq, every=0.005, what=what)


async def _forfeited(hosted: HostedMatch, seat: int) -> bool:
    async with hosted.lock:
        return match_info(hosted).seats[seat].forfeited


async def _act(hosted: HostedMatch, seat: int, what: str) -> None:
    if what == "disconnect":
        await hosted.disconnected(seat)
    errors = {"illegal": IllegalAction, "malformed": MalformedAction}
    for _ in range(2 if what.endswith(" twice") else 1):
        error = errors.get(what.split(maxsplit=1)[0])
        if error is not None:
            with pytest.raises(error):
                await hosted.submit(seat, refused(hosted.engine, seat, error), hosted.last_seq, "")
    seq = hosted.last_seq
    if what == "wait" or await _forfeited(hosted, seat):
        await _moved(hosted, seq, "the clock to play")
    else:
        await hosted.submit(seat, hosted.engine.legal_actions()[0], seq, "")


@dataclass(frozen=True)
class Log:
    resp: spb.GetMatchLogResponse

    def events(self) -> list[pb.Event]:
        return [pb.Event.FromString(e.event) for e in self.resp.entries]

    def seqs(self, kind: str, where: Callable[[pb.Event], bool] = lambda e: True) -> list[int]:
        return [e.seq for e in self.events() if e.WhichOneof("kind") == kind and where(e)]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Log]:
    async def run() -> dict[str, Log]:
        async with SqliteStore(tmp_path_factory.mktemp("faults") / "store.db") as store:
            clocked = await host(
                store, clocked_plan, move_ms=250, forfeit_after=3, tournament_id="t1"
            )
            clockless = await host(
                store, clockless_plan, move_ms=0, forfeit_after=2, tournament_id="t2"
            )
        return {"clocked": Log(clocked), "clockless": Log(clockless)}

    return asyncio.run(asyncio.wait_for(run(), 30))


# -- the clean logs ----------------------------------------------------------------------------


def test_the_hosted_logs_exercise_every_fault_and_audit_clean(logs: dict[str, Log]) -> None:
    clocked, clockless = logs["clocked"], logs["clockless"]
    for log in (clocked, clockless):
        report = audit_log(log.resp)
        assert report.ok, report.failure
        assert report.passed == [name for name, _ in CHECKS]
    refusals = clocked.seqs("seat_faulted", _refusal)  # bob's second in one turn is not logged
    assert sorted(clocked.events()[n - 1].seat_faulted.seat for n in refusals) == [0, 1, 1]
    assert len(clocked.seqs("seat_faulted", _disconnect(2))) == 1
    (forfeit,) = clocked.seqs("seat_forfeited")
    assert clocked.seqs("timed_out", _timeout(1, forfeited=False))[-1] == forfeit - 1
    assert clocked.seqs("timed_out", _timeout(1, forfeited=True)), "the server played bob"
    seats = clocked.resp.match.seats
    assert [(s.faults, s.forfeited) for s in seats] == [(2, False), (3, True), (1, False)]
    assert clocked.resp.match.tournament_id == "t1"
    # No clock, yet the forfeited seat is played at once, after a TimedOut marked forfeited.
    assert clockless.events()[0].match_started.move_ms == 0
    (forfeit,) = clockless.seqs("seat_forfeited")
    assert clockless.seqs("seat_faulted")[-1] == forfeit - 1
    assert clockless.events()[forfeit].timed_out == pb.TimedOut(seat=2, forfeited=True)
    assert [(s.faults, s.forfeited) for s in clockless.resp.match.seats][2] == (2, True)


def _refusal(e: pb.Event) -> bool:
    return e.seat_faulted.kind == pb.FAULT_KIND_REFUSED_ACTION


def _disconnect(seat: int) -> Callable[[pb.Event], bool]:
    return lambda e: (
        e.seat_faulted.seat == seat and e.seat_faulted.kind == pb.FAULT_KIND_DISCONNECTED
    )


def _timeout(seat: int, *, forfeited: bool) -> Callable[[pb.Event], bool]:
    return lambda e: e.timed_out.seat == seat and e.timed_out.forfeited == forfeited


# -- tools of a forger -------------------------------------------------------------------------


def forge(log: Log, events: list[pb.Event]) -> spb.GetMatchLogResponse:
    """A renumbered, re-signed log of ``events`` with ``log``'s MatchInfo (its last seq and
    hash fixed, as a forger who re-signs would)."""
    out = spb.GetMatchLogResponse()
    out.CopyFrom(log.resp)
    del out.entries[:]
    prev = genesis_hash(out.match.match_id)
    for seq, event in enumerate(events, start=1):
        event.seq = seq
        payload = event.SerializeToString()
        prev = chain_hash(prev, payload)
        out.entries.add(seq=seq, event=payload, hash=prev)
    out.match.last_seq, out.match.last_hash = len(events), prev
    return out


def changed(log: Log, seq: int, change: Callable[[pb.Event], object]) -> spb.GetMatchLogResponse:
    events = log.events()
    change(events[seq - 1])
    return forge(log, events)


def inserted(log: Log, seq: int, event: pb.Event) -> spb.GetMatchLogResponse:
    """``event`` put in at ``seq`` (the entries from there on move up one)."""
    events = log.events()
    events.insert(seq - 1, event)
    return forge(log, events)


def dropped(log: Log, seq: int) -> spb.GetMatchLogResponse:
    events = log.events()
    del events[seq - 1]
    return forge(log, events)


def next_action(log: Log, after: int) -> tuple[int, int]:
    """The (seat, action) of the first action after seq ``after``."""
    started = log.events()[0]
    opening = codec.event_from_pb(started)
    assert isinstance(opening, ev.MatchStarted)
    match = Match(opening, seed=SEED)
    for event in log.events()[1:]:
        decoded = codec.event_from_pb(event)
        recorded = match.recorded_action(decoded) if decoded is not None else None
        if recorded is not None:
            if event.seq > after:
                return recorded
            match.apply(*recorded)
    raise AssertionError("no action follows")


# -- the tamperings ----------------------------------------------------------------------------

Tampered = tuple[spb.GetMatchLogResponse, str, int | None, str]
"""The log, the check that must fail, at which seq, and what its reason says."""
TAMPERINGS: dict[str, Callable[[dict[str, Log]], Tampered]] = {}


def tampering(name: str) -> Callable[[Callable[[dict[str, Log]], Tampered]], object]:
    def register(build: Callable[[dict[str, Log]], Tampered]) -> object:
        TAMPERINGS[name] = build
        return build

    return register


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
    out = changed(log, at, lambda e: setattr(e.timed_out, "forfeited", True))
    return out, "faults", at, "seat 0's time-out is marked forfeited"


@tampering("a forfeited seat's time-out counted as a fault")
def _counted_timeout(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("timed_out", _timeout(1, forfeited=True))[0]
    out = changed(log, at, lambda e: setattr(e.timed_out, "forfeited", False))
    return out, "faults", at, "seat 1 forfeited at seq"


@tampering("a forfeited seat acting without the server")
def _unplayed(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    at = log.seqs("timed_out", _timeout(1, forfeited=True))[0]
    return dropped(log, at), "faults", at, "follows no TimedOut marked forfeited"


@tampering("an unmarked time-out in a match without a clock")
def _clockless_timeout(logs: dict[str, Log]) -> Tampered:
    log = logs["clockless"]
    at = log.seqs("timed_out")[0]
    out = changed(log, at, lambda e: setattr(e.timed_out, "forfeited", False))
    return out, "server", at, "a time-out in a match without a clock"


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
    out = forge(log, log.events())
    out.match.seats[2].faults = 0
    (at,) = log.seqs("seat_faulted", _disconnect(2))
    return out, "faults", at, "MatchInfo.seats[2].faults is 0, the log says 1"


@tampering("MatchInfo: a forfeit the log does not have")
def _info_forfeited(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    out = forge(log, log.events())
    out.match.seats[0].forfeited = True
    return out, "faults", None, "MatchInfo.seats[0].forfeited is True, the log says False"


@tampering("MatchInfo: no forfeit where the log has one")
def _info_not_forfeited(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    out = forge(log, log.events())
    out.match.seats[1].forfeited = False
    (at,) = log.seqs("seat_forfeited")
    return out, "faults", at, f"the log says True (SeatForfeited at seq {at})"


@tampering("MatchInfo: another tournament")
def _info_tournament(logs: dict[str, Log]) -> Tampered:
    log = logs["clocked"]
    out = forge(log, log.events())
    out.match.tournament_id = "t2"
    return out, "start", 1, "MatchInfo.tournament_id is 't2', the log says 't1'"


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_every_tampering_fails_on_its_check_at_its_seq(logs: dict[str, Log], name: str) -> None:
    out, check, seq, says = TAMPERINGS[name](logs)
    report = audit_log(out)
    assert report.failure is not None, f"{name}: not caught"
    assert (report.failure.check, report.failure.seq) == (check, seq), report.failure
    assert says in report.failure.reason, report.failure
    assert report.passed == [n for n, _ in CHECKS][: len(report.passed)]


def test_a_policy_free_match_info_that_counts_no_faults_is_taken_as_it_is(
    logs: dict[str, Log],
) -> None:
    """A MatchInfo from before fault counts: time-outs, but every seat's faults 0."""
    log = logs["clocked"]
    events = [
        e
        for e in log.events()
        if e.WhichOneof("kind") not in ("seat_faulted", "seat_forfeited")
        and not (e.WhichOneof("kind") == "timed_out" and e.timed_out.forfeited)
    ]
    events[0].match_started.forfeit_after = 0
    events[0].match_started.tournament_id = ""
    out = forge(log, events)
    out.match.tournament_id = ""
    for seat in out.match.seats:
        seat.faults, seat.forfeited = 0, False
    assert audit_log(out).ok
    out.match.seats[0].faults = 1  # but a count, once given, is the log's
    report = audit_log(out)
    assert report.failure is not None and report.failure.check == "faults", report.failure


# -- in words: the replay and the events' text -------------------------------------------------


def test_the_replay_shows_faults_and_forfeits(
    logs: dict[str, Log], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "faults.json"
    save_log(logs["clocked"].resp, path)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "policy: tournament t1; a seat forfeits after 3 faults" in out
    assert "audit: clean" in out
    for note in (
        "  note   bob sent a refused action (",
        "  note   ann sent a refused action (",
        "  note   ann timed out",
        "  note   cy disconnected (a fault)",
        "  note   bob forfeits after 3 faults",
    ):
        assert note in out, note
    assert "(timed out)" in out and "(forfeited)" in out
    page = tmp_path / "faults.html"
    assert main(["replay", str(path), "--html", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text()
    assert 'id="policy"' in text
    data = json.loads(text.split('id="match-data">')[1].split("</script>")[0])
    lines = [line for step in data["steps"] for line in step["lines"]]
    assert "bob forfeits after 3 faults" in lines


def test_a_refused_action_is_named_only_where_the_log_shows_it(logs: dict[str, Log]) -> None:
    log = logs["clocked"]
    at = log.seqs("seat_faulted", _refusal)[0]
    event = log.events()[at - 1]
    full = server_event_text(event, NAMES)
    assert full is not None and full.startswith("bob sent a refused action (")
    for reader in (None, 0):  # a spectator, another seat
        seen = codec.project_pb(event, reader, voluntary_pass=False)
        assert server_event_text(seen, NAMES) == "bob sent a refused action"
    assert codec.project_pb(event, 1, voluntary_pass=False) == event


def test_the_timeline_puts_each_note_before_the_play_it_precedes(logs: dict[str, Log]) -> None:
    steps = build_timeline(logs["clocked"].resp).steps
    forfeit = next(s for s in steps if "bob forfeits after 3 faults" in s.notes)
    lines = forfeit.lines
    after = lines[lines.index("bob forfeits after 3 faults") + 1 :]
    assert any(line.startswith("bob plays ") and line.endswith(" (timed out)") for line in after)
