"""The auditor and MatchInfo, field by field: every field the log determines is checked, even
against a trusted head; the others are named as not in the log.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.clients.audit import NOT_IN_LOG, audit_log
from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..logs import log_from_engine
from .audit_mutations_start import more_points
from .audit_support import SEED, Base, base_one_deal, clone, edit, flip, hexa

# -- MatchInfo, field by field ---------------------------------------------------------------

InfoEdit = tuple[Callable[[spb.MatchInfo], object], str, Callable[[Base], int | None], str]


def _loser(b: Base) -> int:
    return next(s for s in range(b.match.players) if s not in b.match.winners)


def _set(name: str, value: object) -> Callable[[object], None]:
    return lambda message: setattr(message, name, value)


def _seat(n: int, name: str, value: object) -> Callable[[spb.MatchInfo], None]:
    return lambda info: setattr(next(s for s in info.seats if s.seat == n), name, value)


# field edited: (the edit, the check that must fail, at which seq, what the reason names)
INFO_EDITS: dict[str, InfoEdit] = {
    "match_id": (_set("match_id", "other"), "chain", lambda b: 1, "does not chain"),
    "game": (_set("game", "triathlon"), "start", lambda b: 1, "MatchInfo.game is 'triathlon'"),
    "players": (_set("players", 5), "start", lambda b: 1, "MatchInfo.players is 5"),
    "options": (
        lambda info: more_points(info.options),
        "start",
        lambda b: 1,
        "MatchInfo.options.queens.points_per_queen is 5",
    ),
    "status": (
        _set("status", spb.MATCH_STATUS_RUNNING),
        "start",
        lambda b: b.last,
        "MatchInfo.status is MATCH_STATUS_RUNNING",
    ),
    "seats": (lambda info: info.seats.pop(), "start", lambda b: 1, "MatchInfo.seats is seats"),
    "seats.seat": (_seat(1, "seat", 9), "start", lambda b: 1, "MatchInfo.seats is seats"),
    "seats.taken": (
        _seat(2, "taken", False),
        "start",
        lambda b: b.seqs("seat_joined")[2],
        "MatchInfo.seats[2].taken is False",
    ),
    "seats.name": (
        _seat(0, "name", "mallory"),
        "start",
        lambda b: b.seqs("seat_joined")[0],
        "MatchInfo.seats[0].name is 'mallory', the log says 'ann'",
    ),
    "seats.reserved": (
        _seat(3, "reserved", True),
        "start",
        lambda b: 1,
        "MatchInfo.seats[3].reserved is True, the log says False",
    ),
    "seed_commitment": (
        _set("seed_commitment", "f" * 64),
        "seed",
        lambda b: 1,
        "MatchInfo.seed_commitment is ffff",
    ),
    "last_seq": (
        lambda info: setattr(info, "last_seq", info.last_seq - 1),
        "sequence",
        lambda b: b.last,
        "MatchInfo's last seq",
    ),
    "time_control": (
        lambda info: setattr(info.time_control, "move_ms", 501),
        "start",
        lambda b: 1,
        "MatchInfo.time_control.move_ms is 501, the log says 500",
    ),
    "time_control (none)": (
        lambda info: info.ClearField("time_control"),
        "start",
        lambda b: 1,
        "MatchInfo.time_control.move_ms is 0, the log says 500",
    ),
    "totals": (
        lambda info: setattr(info.totals[0], "numerator", info.totals[0].numerator + 1),
        "result",
        lambda b: b.seqs("match_ended")[0],
        "MatchInfo.totals is",
    ),
    "winners": (
        lambda info: info.winners.append(0 if 0 not in info.winners else 3),
        "result",
        lambda b: b.seqs("match_ended")[0],
        "MatchInfo.winners is",
    ),
    "seed": (_set("seed", bytes(32)), "seed", lambda b: None, "MatchInfo.seed is 0000"),
    "last_hash": (
        lambda info: setattr(info, "last_hash", flip(info.last_hash, 0)),
        "chain",
        lambda b: b.last,
        "MatchInfo.last_hash is",
    ),
    "last_hash (empty)": (
        _set("last_hash", b""),
        "chain",
        lambda b: b.last,
        "MatchInfo.last_hash is empty",
    ),
    "cancelled": (
        _set("cancelled", True),
        "start",
        lambda b: None,
        "MatchInfo.cancelled is True, the log says False",
    ),
    "tournament_id": (
        _set("tournament_id", "cup"),
        "start",
        lambda b: 1,
        "MatchInfo.tournament_id is 'cup', the log says '' (none)",
    ),
    "seats.faults": (
        lambda info: setattr(info.seats[1], "faults", info.seats[1].faults + 1),
        "faults",
        lambda b: b.seqs("timed_out", lambda e: e.timed_out.seat == 1)[-1],
        "MatchInfo.seats[1].faults is",
    ),
    "seats.forfeited": (
        _seat(2, "forfeited", True),
        "faults",
        lambda b: None,
        "MatchInfo.seats[2].forfeited is True, the log says False",
    ),
}


def test_every_field_of_match_info_has_an_edit_or_is_named_as_not_in_the_log() -> None:
    edited = {name.split(" ")[0] for name in INFO_EDITS}
    fields = {f.name for f in spb.MatchInfo.DESCRIPTOR.fields}
    assert {n for n in edited if "." not in n} == fields - NOT_IN_LOG
    seat_fields = {f.name for f in spb.SeatInfo.DESCRIPTOR.fields}
    assert {n.split(".")[1] for n in edited if n.startswith("seats.")} == seat_fields
    assert {"created_unix_ms"} == NOT_IN_LOG


@pytest.mark.parametrize("name", list(INFO_EDITS))
def test_an_edited_match_info_field_fails_even_against_a_trusted_head(name: str) -> None:
    b = hexa()
    change, check, seq_of, says = INFO_EDITS[name]
    out = clone(b.resp)
    change(out.match)
    seq = seq_of(b)
    for head in (None, b.resp.entries[-1].hash):  # the head vouches for the log, not MatchInfo
        report = audit_log(out, head=head)
        assert report.failure is not None, f"{name}: not caught"
        assert (report.failure.check, report.failure.seq) == (check, seq), report.failure
        assert says in report.failure.reason, report.failure


def test_created_unix_ms_is_not_in_the_log_and_not_checked() -> None:
    out = clone(hexa().resp)
    out.match.created_unix_ms = 1_234_567
    assert audit_log(out).ok


@pytest.mark.parametrize("field", ["last_hash", "time_control"])
def test_the_command_with_a_trusted_head_fails_an_edited_match_info(
    field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's two gaps: each edit used to pass ``audit --head``."""
    b = hexa()
    out = clone(b.resp)
    INFO_EDITS[field][0](out.match)
    path = tmp_path / "edited.json"
    save_log(out, path)
    assert main(["audit", str(path), "--head", b.resp.entries[-1].hash.hex()]) == 1
    assert f"MatchInfo.{field}" in capsys.readouterr().out


def test_a_re_signed_clock_passes_only_without_a_trusted_head() -> None:
    """MatchStarted carries the clock: changing it there and in MatchInfo alike re-signs the
    chain, which the head gives away."""
    b = hexa()
    out = edit(b, 1, lambda e: setattr(e.match_started, "move_ms", 60_000))
    out.match.time_control.move_ms = 60_000
    assert audit_log(out).ok
    report = audit_log(out, head=b.resp.entries[-1].hash)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("chain", b.last)


def test_a_log_from_before_the_settings_audits_clean_as_what_it_says() -> None:
    """No move_ms and no reserved_seats in MatchStarted: no clock, no seat reserved."""
    old = log_from_engine(base_one_deal().match, SEED, "old", reserved=(), move_ms=0)
    started = pb.Event.FromString(old.entries[0].event).match_started
    assert started.move_ms == 0 and not started.reserved_seats
    report = audit_log(old)
    assert report.ok, report.failure
    clocked = clone(old)
    clocked.match.time_control.move_ms = 500
    report = audit_log(clocked)
    assert report.failure is not None and (report.failure.check, report.failure.seq) == ("start", 1)
    assert "predates clocks" in report.failure.reason
    reserved = clone(old)
    reserved.match.seats[0].reserved = True
    report = audit_log(reserved)
    assert report.failure is not None and (report.failure.check, report.failure.seq) == ("start", 1)
