"""``cardarena tournament create`` and its sibling actions against real servers: a locked one
creates only for its operator (the token from the environment or a file, never printed); the
invitations on the terminal are TOML with each entrant's key, and only there; a tournament
whose invitations cannot be written is cancelled rather than left waiting for entrants who
were never told; the creator secret cancels on an open server; and the launcher sends the
settings it shares with ``create`` (a stop rule, a name, an entry window)."""

from __future__ import annotations

import errno
import json
import re
import secrets
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.cli import competition, main
from cardarena.clients.client import ArenaClient
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess

pytestmark = pytest.mark.integration

ENTRANTS = ["--entrant", "alice", "--entrant", "bob", "--entrant", "carol"]


def get(address: str, tournament_id: str) -> tpb.TournamentInfo:
    async def read() -> tpb.TournamentInfo:
        async with ArenaClient(address) as client:
            return await client.tournaments.get(tournament_id)

    return run(read(), seconds=30)


def create(address: str, *extra: str) -> list[str]:
    return ["tournament", "create", "--server", address, "--game", "triathlon", *ENTRANTS, *extra]


def test_a_locked_server_creates_for_its_operator_and_the_keys_go_only_to_the_invitations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    token = secrets.token_urlsafe(32)
    monkeypatch.delenv("CARDARENA_ADMIN_TOKEN", raising=False)
    with ServerProcess(tmp_path / "data", extra=[f"--admin-token={token}"]) as server:
        assert main(create(server.address, "--invitations", "-")) == 2
        assert "UNAUTHENTICATED" in capsys.readouterr().err

        monkeypatch.setenv("CARDARENA_ADMIN_TOKEN", token)
        argv = create(server.address, "--invitations", "-", "--deals", "1", "--name", "Locked")
        assert main([*argv, "--public-address", "arena.example.org:50051"]) == 0
        out, err = capsys.readouterr()
        tournament_id, rest = out.split("\n", 1)
        documents = re.split(r"^# ---- .+ ----$", rest, flags=re.M)
        invitations = [tomllib.loads(d) for d in documents if d.strip()]
        assert [i["entrant"] for i in invitations] == ["alice", "bob", "carol"]
        assert {i["tournament"] for i in invitations} == {tournament_id}
        assert {i["server"] for i in invitations} == {"arena.example.org:50051"}
        for invitation in invitations:
            assert invitation["key"] not in err
        assert token not in out + err
        info = get(server.address, tournament_id)
        assert info.name == "Locked" and list(info.entrants) == ["alice", "bob", "carol"]
        assert info.entry_ms == competition.CREATE_ENTRY_MS

        assert main(["tournament", "status", tournament_id, "--server", server.address]) == 0
        status = capsys.readouterr().out
        assert f"tournament {tournament_id} (Locked): running" in status and "entry open" in status
        assert (
            main(["tournament", "status", tournament_id, "--server", server.address, "--json"]) == 0
        )
        assert json.loads(capsys.readouterr().out)["tournament"]["entrants"] == ENTRANTS[1::2]

        monkeypatch.delenv("CARDARENA_ADMIN_TOKEN")
        (tmp_path / "token").write_text(token + "\n")
        cancel = ["tournament", "cancel", tournament_id, "--server", server.address]
        assert (
            main([*cancel, "--admin-token-file", str(tmp_path / "token"), "--reason", "test"]) == 0
        )
        assert "cancelled by the operator: test" in capsys.readouterr().out
        assert get(server.address, tournament_id).cancelled


def test_a_tournament_whose_invitations_cannot_be_written_is_cancelled(
    server_process: ServerProcess,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def full(folder: Path, sent: Any) -> list[Path]:
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "bob.key"))

    monkeypatch.setattr(competition, "write_invitations", full)
    secret = tmp_path / "creator-secret"
    argv = create(server_process.address, "--invitations", str(tmp_path / "inv"))
    assert main([*argv, "--creator-secret-file", str(secret)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "bob.key: No space left on device; tournament" in err
    tournament_id = err.split("; tournament ")[1].split()[0]
    info = get(server_process.address, tournament_id)
    assert info.cancelled and "its invitations could not be written" in info.end_reason
    assert not secret.exists()  # the secret of a tournament that will not be played


def test_the_creator_secret_cancels_on_an_open_server(
    server_process: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "creator-secret"
    folder = tmp_path / "invitations"
    argv = create(server_process.address, "--invitations", str(folder))
    assert main([*argv, "--creator-secret-file", str(secret)]) == 0
    tournament_id = capsys.readouterr().out.strip()
    assert sorted(p.name for p in folder.iterdir()) == [
        f"{name}.{kind}" for name in ("alice", "bob", "carol") for kind in ("key", "toml")
    ]
    cancel = ["tournament", "cancel", tournament_id, "--server", server_process.address]
    assert main(cancel) == 2  # an open server still wants the operator or the creator
    assert "UNAUTHENTICATED" in capsys.readouterr().err
    assert main([*cancel, "--creator-secret-file", str(secret)]) == 0
    assert "cancelled by its creator" in capsys.readouterr().out
    assert main(["tournament", "results", tournament_id, "--server", server_process.address]) == 0
    assert "cancelled by its creator" in capsys.readouterr().out


def test_the_launcher_sends_the_settings_it_shares_with_create(
    server_process: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    argv = ["tournament", "--server", server_process.address, "--game", "triathlon"]
    argv += ["--bot", "random", "--bot", "rules", "--bot", "r2=random", "--deals", "1"]
    argv += ["--sprt", "a=random,b=rules,d1=50", "--name", "Launched", "--entry-ms", "30000"]
    assert main([*argv, "--move-ms", "2000", "--no-progress", "--json", str(results)]) == 0
    assert "SPRT random vs rules" in capsys.readouterr().out
    tournament_id = json.loads(results.read_text())["tournament"]["id"]
    info = get(server_process.address, tournament_id)
    assert (info.name, info.entry_ms, info.stop.a, info.stop.b) == (
        "Launched",
        30000,
        "random",
        "rules",
    )
    assert info.stop.d1 == 50 and info.finished == info.planned == 3
