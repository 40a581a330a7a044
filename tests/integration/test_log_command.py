"""``cardarena log fetch`` and ``log keys`` against a real server, and the audits that read
what they wrote: a match's log as a file audits clean with the server's key and fails with
another; a match that is not there is named, and the others are written (exit 1), or nothing
is (exit 2); a results file's tournament is audited from the server when no logs are given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cardarena.clients.cli import main
from cardarena.clients.logs import load_log

from ..calls import new_table, play_out, with_api
from ..serverproc import ServerProcess

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration


def played(address: str) -> str:
    async def scenario(api: MatchServiceAsyncStub) -> str:
        table = await new_table(api)
        await play_out(api, table)
        return table.match_id

    return with_api(address, scenario)


def test_fetched_logs_audit_with_the_servers_key_and_not_with_another(
    server: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match_id = played(server.address)
    out = tmp_path / "logs"
    assert (
        main(["log", "fetch", "--server", server.address, "--match", match_id, "--out", str(out)])
        == 0
    )
    assert "1 of 1 logs written" in capsys.readouterr().out
    log = load_log(out / f"{match_id}.pb")
    assert log.checkpoint.match_id == match_id and log.checkpoint.last_seq == log.entries[-1].seq
    assert main(["log", "keys", "--server", server.address]) == 0
    listed = capsys.readouterr().out
    current = listed.split()[0]
    assert current.startswith("ed25519:") and "current" in listed.splitlines()[0]
    keys = tmp_path / "keys.txt"
    keys.write_text(listed)  # the comments after '#' are allowed
    assert main(["audit", str(out / f"{match_id}.pb"), "--key", str(keys)]) == 0
    assert "[ok  ] signature" in capsys.readouterr().out
    other = "ed25519:" + "11" * 32
    assert main(["audit", str(out / f"{match_id}.pb"), "--key", other, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["failure"]["check"] == "signature"
    assert "none of the keys given" in report["failure"]["reason"]


def test_a_missing_match_is_named_and_the_others_are_written(
    server: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match_id = played(server.address)
    out = tmp_path / "logs"
    fetch = ["log", "fetch", "--server", server.address, "--out", str(out), "--json"]
    assert main([*fetch, "--match", match_id, "--match", "no-such-match"]) == 1
    captured = capsys.readouterr()
    assert "'no-such-match'" in captured.err and "NOT_FOUND" in captured.err
    assert "Traceback" not in captured.err
    assert (out / f"{match_id}.json").exists()
    assert main([*fetch, "--match", "no-such-match"]) == 2
    assert main(["log", "fetch", "--results", str(tmp_path / "none.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_audit_results_fetches_from_the_server_a_results_file_names(
    server: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    code = main(
        [
            "tournament",
            "--server",
            server.address,
            "--game",
            "triathlon",
            "--bot",
            "random",
            "--bot",
            "rules",
            "--bot",
            "low=random",
            "--deals",
            "1",
            "--move-ms",
            "5000",
            "--no-progress",
            "--json",
            str(results),
        ]
    )
    assert code == 0
    capsys.readouterr()
    assert main(["audit", "--results", str(results), "--workers", "2"]) == 0
    line = capsys.readouterr().out
    assert "3 of 3 match logs audited, signatures not checked (no --key)" in line
    assert line.rstrip().endswith("all clean")
    doctored = json.loads(results.read_text())
    doctored["matches"][0]["last_hash"] = "00" * 32  # the file pins another log
    results.write_text(json.dumps(doctored))
    assert main(["audit", "--results", str(results), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any("is pinned to 0000" in f for f in report["first_findings"]), report
