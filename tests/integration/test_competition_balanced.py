"""Issue 30's competition from the command line alone: a 12-entrant balanced-sample tournament
created with invitations, its invitations' commands run by 12 separate ``bot connect``
processes, followed to its end, its signed results written and audited clean."""

from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cardarena.clients.cli import main

from ..serverproc import ServerProcess

pytestmark = pytest.mark.integration

ENTRANTS = [f"e{i:02d}" for i in range(12)]
CLI = [sys.executable, "-c", "from cardarena.clients.cli import main; raise SystemExit(main())"]


def test_a_balanced_competition_runs_from_the_command_line_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    invitations = tmp_path / "invitations"
    with ServerProcess(tmp_path / "data") as server:
        created = main(
            [
                "tournament",
                "create",
                "--server",
                server.address,
                "--game",
                "crazy_sixes",
                "--players",
                "4",
                "--pairing",
                "balanced",
                "--deals",
                "1",
                "--concurrency",
                "8",
                "--bank-ms",
                "60000",
                "--increment-ms",
                "100",
                "--move-ms",
                "0",
                *(arg for name in ENTRANTS for arg in ("--entrant", name)),
                "--invitations",
                str(invitations),
            ]
        )
        assert created == 0
        tournament_id = capsys.readouterr().out.strip()
        bots = []
        for name in ENTRANTS:
            invitation = tomllib.loads((invitations / f"{name}.toml").read_text())
            argv = shlex.split(invitation["command"])
            assert argv[:3] == ["cardarena", "bot", "connect"] and argv[-1] == "BOT"
            log = (tmp_path / f"{name}.log").open("w")
            bots.append(
                subprocess.Popen(
                    [*CLI, *argv[1:-1], "random"],
                    cwd=invitations,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        try:
            assert main(["tournament", "watch", tournament_id, "--server", server.address]) == 0
            for bot in bots:
                assert bot.wait(timeout=60) == 0
        finally:
            for bot in bots:
                bot.kill()
        results = tmp_path / "results.json"
        argv = ["tournament", "results", tournament_id, "--server", server.address]
        assert main([*argv, "--json", str(results)]) == 0
        capsys.readouterr()
        assert main(["audit", "--results", str(results), "--server", server.address]) == 0
        report = capsys.readouterr().out
        assert "48 matches" in report or "48 of 48" in report, report
