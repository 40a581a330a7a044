"""docs/competition.md is run, not only read: every shell block, in order, in one shell, as the
chapter says (from an empty folder, the clone's ``cardarena`` first on the path), against a
real server started as its first block starts it (with the token that block makes), on
127.0.0.1:0 instead of the chapter's port. Then what the chapter promises is checked: the
invitations' modes, no key anywhere but in them, the standings, the audit of the signed
results. Its TOML blocks are held to the code too: the config file makes the very request
the command line does, the sample invitation has the fields a real one has, and the table
lists every flag of ``create``."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.cli import competition, main
from cardarena.clients.cli.settings import request_of
from cardarena.clients.tournament.invitations import Invitation

from ..serverproc import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "competition.md"
DOC_ADDRESS = "127.0.0.1:50051"
BLOCK = re.compile(r"```(sh|toml)\n(.*?)```", re.S)
SERVE = re.compile(r'^CARDARENA_ADMIN_TOKEN="\$\(cat admin-token\)" cardarena serve (.*) &$')
SCRIPT_TIMEOUT_S = 120


def blocks(kind: str) -> list[str]:
    return [text for found, text in BLOCK.findall(DOC.read_text()) if found == kind]


def newcomer_env() -> dict[str, str]:
    """A shell with this clone's ``cardarena`` first on the path and none of the test
    process's ``CARDARENA_`` variables (the chapter's commands must not need them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDARENA_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    return env


def split_first_block(block: str) -> tuple[str, str]:
    """The first block without its server line (and the address export): what makes the
    token; and the server line's flags, which must be the ones the test starts it with."""
    lines = block.strip().splitlines()
    (serve,) = [line for line in lines if SERVE.match(line)]
    assert lines[-1] == f"export SERVER={DOC_ADDRESS}"
    return "\n".join(line for line in lines[:-1] if line != serve), serve


@pytest.mark.integration
def test_the_chapter_runs_from_nothing_to_an_audited_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, *rest = blocks("sh")
    setup, serve = split_first_block(first)
    match = SERVE.match(serve)
    assert match is not None
    assert shlex.split(match.group(1)) == ["--listen", DOC_ADDRESS, "--data-dir", "arena-data"]
    work = tmp_path / "organiser"
    work.mkdir()
    env = newcomer_env()
    made = subprocess.run(["bash", "-euo", "pipefail", "-c", setup], cwd=work, env=env, check=False)
    assert made.returncode == 0
    token = (work / "admin-token").read_text().strip()
    assert stat.S_IMODE((work / "admin-token").stat().st_mode) == 0o600

    # The server as the block starts it: the token from the environment, the data folder.
    monkeypatch.setenv("CARDARENA_ADMIN_TOKEN", token)
    with ServerProcess(work / "arena-data") as server:
        monkeypatch.delenv("CARDARENA_ADMIN_TOKEN")
        numbered = [f"BLOCK={n}\n{text}" for n, text in enumerate(rest, start=2)]
        script = "\n".join(
            [
                "trap 'echo \"failed in block $BLOCK\" >&2' ERR",
                f"export SERVER={server.address}",
                *numbered,
            ]
        )
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT_S,
            check=False,
        )
        server_log = server.stderr_path.read_text()
    said = done.stdout + done.stderr
    assert done.returncode == 0, said

    # The invitations: a folder only its owner reads, two files an entrant, each 0600.
    invitations = work / "invitations"
    assert stat.S_IMODE(invitations.stat().st_mode) == 0o700
    names = ["alice", "bob", "carol"]
    assert sorted(p.name for p in invitations.glob("*.t*")) == [f"{n}.toml" for n in names]
    keys = []
    for name in names:
        for suffix in (".toml", ".key"):
            assert stat.S_IMODE((invitations / f"{name}{suffix}").stat().st_mode) == 0o600
        invitation = tomllib.loads((invitations / f"{name}.toml").read_text())
        key = (invitations / f"{name}.key").read_text().strip()
        assert invitation["key"] == key and invitation["entrant"] == name
        assert invitation["command"].startswith("cardarena bot connect --server ")
        keys.append(key)
    assert stat.S_IMODE((work / "creator-secret").stat().st_mode) == 0o600

    # No key, no token, no creator secret in anything printed or logged.
    bots = "".join((invitations / f"{n}.log").read_text() for n in names)
    secrets_ = [*keys, token, (work / "creator-secret").read_text().strip()]
    for secret in secrets_:
        assert secret not in said and secret not in server_log and secret not in bots

    standings = (work / "standings.txt").read_text()
    assert all(name in standings for name in names)
    assert "every planned match was played" in standings or "stop rule" in standings
    assert "SPRT alice vs bob" in standings
    assert (work / "results.json").exists() and (work / "standings.csv").exists()
    assert "signatures verified" in done.stdout and "all clean" in done.stdout


def test_the_config_file_makes_the_request_the_command_line_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chapter's ``cup.toml`` and its ``create`` command line ask for one tournament."""
    create = next(text for text in blocks("sh") if "tournament create" in text)
    inner = create[create.index("$(") + 2 : create.index(")\n")].replace("\\\n", " ")
    argv = shlex.split(inner)[1:]
    assert argv[:2] == ["tournament", "create"]
    config = next(text for text in blocks("toml") if text.startswith("# cup.toml"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "admin-token").write_text("t" * 43 + "\n")
    (tmp_path / "cup.toml").write_text(config)
    asked: list[tuple[Any, list[str]]] = []

    async def captured(args: Any, names: list[str], folder: Path | None) -> int:
        asked.append((request_of(args, "entrant"), names))
        return 0

    monkeypatch.setattr(competition, "_created", captured)
    by_flags = [arg.replace("$SERVER", DOC_ADDRESS) for arg in argv]
    assert main(by_flags) == 0
    common = ["--server", DOC_ADDRESS, "--admin-token-file", "admin-token"]
    by_file = ["tournament", "create", *common, "--config", "cup.toml", "--invitations", "x"]
    assert main(by_file) == 0
    (flags_request, flags_names), (file_request, file_names) = asked
    assert flags_names == file_names == ["alice", "bob", "carol"]
    assert flags_request == file_request
    assert flags_request.stop.a == "alice" and flags_request.name == "Spring cup"


def test_the_sample_invitation_has_the_fields_of_a_real_one(tmp_path: Path) -> None:
    sample = next(text for text in blocks("toml") if text.startswith("# An invitation"))
    shown = tomllib.loads(sample)
    real = Invitation(
        server=DOC_ADDRESS,
        tournament_id=shown["tournament"],
        entrant="alice",
        key="k" * 43,
        stem="alice",
        game="triathlon",
        players=3,
        deals=2,
        move_ms=2000,
        entry_closes_unix_ms=0,
    )
    made = tomllib.loads(real.toml())
    assert {k: type(v) for k, v in shown.items()} == {k: type(v) for k, v in made.items()}
    assert shown["command"] == made["command"]
    comments = [line for line in sample.splitlines() if line.startswith("#")]
    assert comments == [line for line in real.toml().splitlines() if line.startswith("#")]


def test_the_table_lists_every_flag_of_create() -> None:
    """A setting added to the command line is one the chapter's table tells."""
    text = DOC.read_text()
    section = text[text.index("Every setting of `create`") : text.index("## 3.")]
    documented = set(re.findall(r"^\| `(--[a-z-]+)", section, re.M))
    parser = competition.add_actions(argparse.ArgumentParser())["create"]
    flags = {flag for action in parser._actions for flag in action.option_strings}
    assert documented == flags - {"-h", "--help", "--admin-token"}
