"""The auditor's faults check, on logs the real hosting layer writes under a fault policy.

Two tournament matches are hosted in-process (an Arena over SQLite) with seats that send
refused actions, let the clock play for them, disconnect and forfeit; their stored logs and
MatchInfo audit clean. Each tampering (``audit_faults_tamperings``) is then re-signed (every
hash recomputed, so the chain holds) and must fail on the check it names, at the seq it
names: only the rules of docs/protocol.md, "Faults and forfeits", can tell.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cardarena.clients.audit import CHECKS, audit_log
from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.clients.logs.text import server_event_text
from cardarena.clients.replay import build_timeline
from cardarena.server.store import SqliteStore
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from . import audit_faults_tamperings
from .audit_faults_support import (
    NAMES,
    TAMPERINGS,
    Log,
    _disconnect,
    _refusal,
    _timeout,
    clocked_plan,
    clockless_plan,
    forge,
    host,
)

TAMPERING_MODULES = (audit_faults_tamperings,)
"""Imported for its tamperings, which it registers in ``TAMPERINGS``."""


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Log]:
    async def run() -> dict[str, Log]:
        async with SqliteStore(tmp_path_factory.mktemp("faults") / "store.db") as store:
            clocked = await host(
                store,
                clocked_plan,
                move_ms=1_000,  # a refused action and the next one fit a turn on a busy machine
                forfeit_after=3,
                tournament_id="t1",
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
