"""``cardarena audit``: log files in every format, the report, the exit codes, and logs from a
real server, from the wire and from a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2

from cardarena.clients.audit import CHECKS, AuditReport, audit_log
from cardarena.clients.cli import main
from cardarena.clients.logs import LogUnavailable, load_log, save_log
from cardarena.engine import new_match
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..logs import log_from_engine
from ..serverproc import ServerProcess
from ..waiting import eventually
from . import audit_mutations_play  # noqa: F401  # registers the mutation used below
from .audit_support import MUTATIONS, NAMES, SEED, base, hexa

# -- the log file and the command ------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".pb", ".json", ".log"])
def test_a_log_file_round_trips_exactly(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f"match{suffix}"
    save_log(hexa().resp, path)
    assert load_log(path) == hexa().resp


def test_log_from_engine_refuses_what_a_server_would_not_write() -> None:
    match = new_match("triathlon", seed=SEED)
    with pytest.raises(ValueError, match="has not ended"):
        log_from_engine(match, SEED, "m")
    done = base("triathlon", 3).match
    with pytest.raises(ValueError, match="not an action"):
        log_from_engine(done, SEED, "m", timed_out=[0])
    with pytest.raises(ValueError, match="names for 3 seats"):
        log_from_engine(done, SEED, "m", names=["a"])


def test_the_command_reports_a_clean_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hexathlon.json"
    save_log(hexa().resp, path)
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "hexathlon, 4 players" in out
    assert "seats    0: ann, 1: bob, 2: cy, 3: di" in out
    totals = ", ".join(f"{n} {t}" for n, t in zip(NAMES, hexa().match.totals, strict=False))
    assert f"totals   {totals}" in out
    assert out.count("[ok  ]") == len(CHECKS)
    assert out.rstrip().endswith("CLEAN: every check passed")


def test_the_command_reports_the_first_discrepancy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutated, _, seq = MUTATIONS["re-signed: a trick winner"]()
    path = tmp_path / "forged.json"
    save_log(mutated, path)
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"FAILED at seq {seq}: the log records: trick" in out
    assert "[FAIL] replay" in out and "[--  ] server" in out and out.count("[ok  ]") == 6
    assert main(["audit", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [c["status"] for c in report["checks"]] == ["passed"] * 6 + [
        "failed",
        "skipped",
        "skipped",
        "skipped",
    ]
    assert report["failure"]["seq"] == seq and report["failure"]["check"] == "replay"


def test_the_command_checks_a_trusted_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.pb"
    save_log(hexa().resp, path)
    assert main(["audit", str(path), "--head", hexa().resp.entries[-1].hash.hex()]) == 0
    assert main(["audit", str(path), "--head", "00" * 32]) == 1
    assert "not at the trusted head" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.pb", None, "no such file"),
        ("garbage.pb", b"\xff\xff\xff\xff", "not a match log"),
        ("empty.pb", b"", "not a match log"),
        ("broken.json", b'{"match": ', "bad JSON"),
        ("other.json", b'{"games": []}', "not a match log"),
        ("binary.json", b"\x80\x81", "bad JSON"),
    ],
)
def test_unreadable_input_exits_2_with_a_clear_message(
    name: str,
    content: bytes | None,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main(["audit", str(path)]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(LogUnavailable, match=message):
        load_log(path)
    assert main(["audit", str(path), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["ok"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give LOGFILE, or both --server"),
        (["x.pb", "--server", "h:1", "--match", "m"], "not both"),
        (["--server", "127.0.0.1:1"], "give LOGFILE, or both --server"),
        (["x.pb", "--head", "abc"], "64 hex digits"),
    ],
)
def test_misuse_exits_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["audit", *args])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_server_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--server", "127.0.0.1:1", "--match", "m"]) == 2
    err = capsys.readouterr().err
    assert "cannot fetch the log of match 'm'" in err and "UNAVAILABLE" in err


def test_report_fields_are_in_check_order() -> None:
    assert [name for name, _ in CHECKS] == [
        "decode", "sequence", "chain", "start", "seed", "reveal", "replay", "server", "faults",
        "result",
    ]  # fmt: skip
    assert isinstance(audit_log(hexa().resp), AuditReport)


# -- a real server ---------------------------------------------------------------------------


@pytest.mark.integration
def test_real_server_logs_audit_clean_from_the_wire_and_from_a_file(
    tmp_path: Path, server_process: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """A match played through the API, and one played by the clock alone (every move a
    time-out), both audit clean; the server's refusals exit 2."""
    import asyncio

    import grpc

    from cardarena.clients.logs import fetch_log

    from .. import calls
    from ..calls import Table, stub

    async def create(api: Any, game: str, move_ms: int, **options: Any) -> tuple[str, list[str]]:
        struct = struct_pb2.Struct()
        struct.update(options)
        request = spb.CreateMatchRequest(
            game=game, players=3, options=struct, time_control=spb.TimeControl(move_ms=move_ms)
        )
        match_id = (await api.CreateMatch(request, timeout=10)).match.match_id
        joins = [spb.JoinMatchRequest(match_id=match_id, name=f"bot{s}") for s in range(3)]
        return match_id, [(await api.JoinMatch(j, timeout=10)).token for j in joins]

    async def scenario(address: str) -> tuple[str, str, str]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            played, tokens = await create(api, "pentathlon", 0, rounds=["pass", "fan_tan"])
            await calls.play_out(api, Table(played, tokens))
            clocked, _ = await create(api, "triathlon", 30, max_deals=1)
            running, _ = await create(api, "crazy_sixes", 0)

            async def clock_finished() -> bool:
                info = await api.GetMatch(spb.GetMatchRequest(match_id=clocked), timeout=10)
                return info.match.status == spb.MATCH_STATUS_ENDED

            await eventually(clock_finished, within=60, what="the clock to finish the match")
            return played, clocked, running

    played, clocked, running = asyncio.run(scenario(server_process.address))
    for match_id in (played, clocked):
        assert main(["audit", "--server", server_process.address, "--match", match_id]) == 0
        assert "CLEAN: every check passed" in capsys.readouterr().out
    resp = asyncio.run(fetch_log(server_process.address, clocked))
    kinds = [pb.Event.FromString(e.event).WhichOneof("kind") for e in resp.entries]
    assert kinds.count("timed_out") >= 42, "every move of the clocked match timed out"
    path = tmp_path / "clocked.json"
    save_log(resp, path)
    assert main(["audit", str(path)]) == 0
    assert main(["replay", "--server", server_process.address, "--match", played]) == 0
    assert "audit: clean" in capsys.readouterr().out
    assert main(["audit", "--server", server_process.address, "--match", running]) == 2
    assert "FAILED_PRECONDITION" in capsys.readouterr().err
    assert main(["audit", "--server", server_process.address, "--match", "nope"]) == 2
    assert "NOT_FOUND" in capsys.readouterr().err


@pytest.mark.integration
def test_real_server_cancelled_matches_audit_clean(server_process: ServerProcess) -> None:
    """A match cancelled by its creator while waiting (one seat reserved, one free) and one
    cancelled mid-play, with a clock: both logs end MatchCancelled, SeedRevealed and audit
    clean against the last hash the server reported, every MatchInfo field checked."""
    import asyncio

    import grpc

    from cardarena.clients.logs import fetch_log

    from ..calls import Table, act_times, auth, stub

    creator, joiner = "c" * 40, "j" * 40

    async def create(api: Any, game: str, move_ms: int) -> str:
        request = spb.CreateMatchRequest(
            game=game,
            players=3,
            time_control=spb.TimeControl(move_ms=move_ms),
            reserved_seats=[spb.SeatReservation(seat=1, join_secret=joiner)],
            creator_secret=creator,
        )
        return str((await api.CreateMatch(request, timeout=10)).match.match_id)

    async def scenario(address: str) -> list[tuple[str, bytes]]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            waiting = await create(api, "triathlon", 0)
            await api.JoinMatch(spb.JoinMatchRequest(match_id=waiting, name="ann"), timeout=10)
            playing = await create(api, "pentathlon", 60_000)
            tokens = []
            for seat in range(3):
                join = spb.JoinMatchRequest(
                    match_id=playing,
                    seat=seat,
                    name=f"bot{seat}",
                    join_secret=joiner if seat == 1 else "",
                )
                tokens.append((await api.JoinMatch(join, timeout=10)).token)
            await act_times(api, Table(playing, tokens), 12)
            heads = []
            for match_id in (waiting, playing):
                cancel = spb.CancelMatchRequest(match_id=match_id, reason="rain")
                done = await api.CancelMatch(cancel, metadata=auth(creator), timeout=10)
                assert done.match.cancelled and done.match.status == spb.MATCH_STATUS_ENDED
                heads.append((match_id, done.match.last_hash))
            return heads

    for match_id, head in asyncio.run(scenario(server_process.address)):
        resp = asyncio.run(fetch_log(server_process.address, match_id))
        kinds = [pb.Event.FromString(e.event).WhichOneof("kind") for e in resp.entries]
        assert kinds[-2:] == ["match_cancelled", "seed_revealed"] and "match_ended" not in kinds
        started = pb.Event.FromString(resp.entries[0].event).match_started
        assert list(started.reserved_seats) == [False, True, False]
        report = audit_log(resp, match_id=match_id, head=head)
        assert report.ok, report.failure
        assert report.winners == []
