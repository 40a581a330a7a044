"""What a results file claims beside each match, held to the logs with no key (a review's
finds): which way the game is won, which planned matches started and ended, why the
tournament ended, one standings row per entrant, and the flags that say a mean or an
interval is there. Each forgery rewrites the readable part from the forged message with the
results writer and drops the signature, as a forger without the key would: the audit must
name what was changed, not say "all clean".

A Triathlon tournament of two deals, so that every row has an interval.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.clients.audit.tournament import TournamentAudit, _check_match
from cardarena.clients.cli import main
from cardarena.clients.logs.bundle import read_logs
from cardarena.clients.logs.results import INFO_FIELD, info_field
from cardarena.clients.tournament.hosted_report import hosted_json
from cardarena.competition import Played, crosstable, standings
from cardarena.server.tournaments.info import _pairing, _standing
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..serverproc import ServerProcess
from .test_results_integrity import host_tournament

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    work = tmp_path_factory.mktemp("claims")
    with ServerProcess(work / "data") as server:
        host_tournament(work, server.address, deals=2)
        yield work


def original(work: Path) -> tuple[tpb.TournamentInfo, str]:
    data = json.loads((work / "results.json").read_text())
    info = tpb.TournamentInfo.FromString(base64.b64decode(data[INFO_FIELD]))
    return info, data["tournament"]["server"]


def audited(work: Path, info: tpb.TournamentInfo, server: str) -> tuple[int, str]:
    """``cardarena audit --results`` (no key) of ``info`` embedded, its readable part
    written from it."""
    info.ClearField("results_signature")
    results = {**hosted_json(info, server=server), INFO_FIELD: info_field(info)}
    path = work / "forged.json"
    path.write_text(json.dumps(results))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["audit", "--results", str(path), "--logs", str(work / "logs")])
    return code, out.getvalue()


def found(work: Path, info: tpb.TournamentInfo, server: str, *words: str) -> None:
    code, out = audited(work, info, server)
    assert code == 1 and "all clean" not in out, out
    for word in words:
        assert word in out, (word, out)


def from_logs(work: Path, info: tpb.TournamentInfo) -> list[Played]:
    """Each started match as the auditor reads it from its log."""
    lines = [m for m in info.matches if m.match_id]
    logs = read_logs(work / "logs", [m.match_id for m in lines])
    report = TournamentAudit(info.tournament_id)
    out = []
    for line in lines:
        log = logs[line.match_id]
        assert isinstance(log, spb.GetMatchLogResponse), log
        out.append(_check_match(info, line, log, report))
    assert not report.findings, report.findings
    return sorted((p for p in out if p is not None), key=lambda p: p.index)


def restate(info: tpb.TournamentInfo, matches: list[Played]) -> None:
    """The standings and crosstable rewritten from ``matches`` as the server writes them, so
    that only the claim under test differs from what an honest server would sign."""
    rows = standings(matches, info.entrants, lowest_wins=info.lowest_wins)
    del info.standings[:]
    info.standings.extend(_standing(r) for r in rows)
    pairs = crosstable(matches, info.entrants, lowest_wins=info.lowest_wins)
    del info.crosstable[:]
    info.crosstable.extend(_pairing(p) for p in pairs)


def test_the_file_as_written_audits_clean(played: Path) -> None:
    info, server = original(played)
    assert all(s.has_interval for s in info.standings)
    code, out = audited(played, info, server)
    assert code == 0 and "all clean" in out, out


def test_the_game_decides_which_way_it_is_won(played: Path) -> None:
    """Flipped, with standings and crosstable recomputed to agree: the worst entrant first."""
    info, server = original(played)
    before = [s.entrant for s in info.standings]
    info.lowest_wins = not info.lowest_wins
    restate(info, from_logs(played, info))
    assert [s.entrant for s in info.standings] != before
    found(played, info, server, "triathlon is won by the highest")


def test_a_played_group_cannot_be_listed_as_never_started(played: Path) -> None:
    """The second deal's matches hidden as "not started", the standings over the first deal
    only, the counts made to agree, and still "every planned match was played"."""
    info, server = original(played)
    hidden = [m for m in info.matches if m.group == 1]
    assert len(hidden) == 3 and all(m.match_id for m in hidden)
    for line in hidden:
        for name in ("match_id", "status", "cancelled", "totals", "winners", "faults",
                     "forfeited", "last_hash"):  # fmt: skip
            line.ClearField(name)
    matches = from_logs(played, info)
    restate(info, matches)
    info.finished = info.started = len(matches)
    info.forfeits = sum(sum(p.forfeited) for p in matches)
    info.void_matches = sum(1 for p in matches if all(p.forfeited or [0]))
    found(played, info, server, "3 planned matches never started")


def test_a_standings_row_cannot_stand_in_for_another_entrants(played: Path) -> None:
    info, server = original(played)
    dropped = info.standings[1].entrant
    info.standings[1].CopyFrom(info.standings[0])
    found(played, info, server, "standings: rows for", dropped)


@pytest.mark.parametrize("table", ["standings", "crosstable"])
def test_a_mean_and_an_interval_cannot_be_hidden_by_their_flags(played: Path, table: str) -> None:
    """The flags cleared, the figures left: the readable file shows no mean and no interval."""
    info, server = original(played)
    row = next(r for r in getattr(info, table) if r.mean != 0.0)
    row.has_mean = row.has_interval = False
    found(played, info, server, "has_mean is False", "has_interval is False")


def test_a_figure_left_behind_a_cleared_flag_is_found(played: Path) -> None:
    info, server = original(played)
    row = info.standings[0]
    row.has_interval = False
    row.ci_low, row.ci_high = 0.0, 0.0
    found(played, info, server, "has_interval is False")
    info, server = original(played)
    pair = info.crosstable[0]
    pair.has_mean, pair.mean = False, 0.0
    found(played, info, server, "has_mean is False")


def test_every_started_match_is_listed_as_ended(played: Path) -> None:
    info, server = original(played)
    info.matches[0].status = spb.MATCH_STATUS_RUNNING
    found(played, info, server, "listed as not ended")


def test_a_match_never_started_lists_no_outcome(played: Path) -> None:
    info, server = original(played)
    line = info.matches[5]
    kept = (line.index, line.group, line.deal, line.rotation, list(line.entrants))
    line.Clear()
    line.index, line.group, line.deal, line.rotation = kept[:4]
    line.entrants.extend(kept[4])
    line.winners.append(0)  # and its log left out of the file: the count of started agrees
    info.started -= 1
    found(played, info, server, "never started, yet lists ['winners']")


def test_the_started_count_is_the_lines(played: Path) -> None:
    info, server = original(played)
    info.started += 5
    found(played, info, server, "started is 11, it lists 6")


def test_an_end_reason_is_the_plans_unless_cancelled_or_ruled(played: Path) -> None:
    info, server = original(played)
    info.end_reason = "the stop rule accepted H1 (llr 3.500)"
    found(played, info, server, "neither cancelled nor by its stop rule")


def test_a_cancellation_without_a_key_is_said_to_be_on_the_files_word(played: Path) -> None:
    """No log records why a tournament was cut short: without a key the audit says whose
    word that is, rather than that it was recomputed."""
    info, server = original(played)
    info.cancelled = True
    info.end_reason = "cancelled by the operator: entrant rules was caught cheating"
    code, out = audited(played, info, server)
    assert code == 0, out
    assert "recomputed (its cancellation on the file's word): all clean" in out, out


def test_a_cancelled_match_lists_no_outcome(played: Path) -> None:
    """A line listed as cancelled, with its log's record of the match saying so too, must not
    list totals or winners: they would show in the file for a match that counted for nothing.
    (No match of this tournament was cancelled: the log's own record is edited here, which
    the log's audit would catch on its own; this pins the line's check.)"""
    info, _ = original(played)
    line = info.matches[0]
    log = read_logs(played / "logs", [line.match_id])[line.match_id]
    assert isinstance(log, spb.GetMatchLogResponse), log
    log.match.cancelled = line.cancelled = True
    report = TournamentAudit(info.tournament_id)
    assert _check_match(info, line, log, report) is None
    assert report.findings == [
        f"match 0 ({line.match_id}): its log ends cancelled, yet the tournament lists an outcome"
    ]
    del line.totals[:], line.winners[:], line.faults[:], line.forfeited[:]
    report = TournamentAudit(info.tournament_id)
    _check_match(info, line, log, report)
    assert report.findings == []
