"""A hosted tournament followed in the web app, in headless Chromium.

``cardarena tournament`` runs three reference bots on the server while the browser finds
the tournament in the lobby, opens its page (live through WatchTournament, relayed by the
gRPC-Web gateway), follows a match in play to its table, waits for the end, and opens a
finished match's replay from the page. The page's standings and crosstable must be the
server's. Skipped without Chromium or Node, unless ``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1 import tournament_pb2_grpc as tgrpc
from tests.serverproc import ServerProcess

from .browser import REPO, playwright_core, run_driver
from .test_table import SHOTS, tools

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_tournament.cjs")
CLI = [sys.executable, "-c", "from cardarena.clients.cli import main; raise SystemExit(main())"]
BOTS = ("random", "rules", "first=tests.tournament_bots:FirstLegal")


async def the_tournament(address: str) -> tpb.TournamentInfo:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = tgrpc.TournamentServiceStub(channel)
        listed = await stub.ListTournaments(tpb.ListTournamentsRequest(), timeout=10)
        (only,) = listed.tournaments
        return only


def test_a_tournament_page_follows_standings_crosstable_and_matches(tmp_path: Path) -> None:
    browser, node = tools()
    library = playwright_core()
    SHOTS.mkdir(parents=True, exist_ok=True)
    with ServerProcess(tmp_path / "data", web="127.0.0.1:0") as server:
        command = [
            *CLI, "tournament", "--server", server.address, "--game", "pentathlon",
            "--options", json.dumps({"rounds": ["pass"]}), "--players", "3",
            *(arg for bot in BOTS for arg in ("--bot", bot)),
            "--deals", "2", "--concurrency", "1", "--move-ms", "5000", "--no-progress",
        ]  # fmt: skip
        runner = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        try:
            seen = run_driver(
                [
                    node,
                    str(DRIVER),
                    str(library),
                    browser,
                    f"http://{server.web_address}",
                    str(SHOTS),
                ]
            )
            _, stderr = runner.communicate(timeout=120)
            assert runner.returncode == 0, stderr[-3000:]
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait(10)
        info = asyncio.run(the_tournament(server.address))

    assert seen["errors"] == []
    end = seen["end"]
    assert end["error"] == "" and end["status"] == "ended"
    assert end["standings"] == [s.entrant for s in info.standings]
    assert len(end["standings"]) == len(BOTS)
    assert end["crossRows"] == len(BOTS)
    assert sum(cell not in ("", "—") for cell in end["crossCells"]) == len(BOTS) * (len(BOTS) - 1)
    assert len(end["matches"]) == info.planned and all(
        m["link"] == "replay" for m in end["matches"]
    )
    assert f"{info.finished} of {info.planned} matches finished" in end["progress"]
    # The summary counts what happened, forfeits and cancellations too, as the terminal does.
    assert f"{info.forfeits} seat forfeit" in end["progress"]
    assert f"{info.failed} cancelled or failed" in end["progress"]
    if "live" in seen:
        assert seen["live"]["seats"] == 3
    assert seen["replay"]["ok"] == "true" and seen["replay"]["steps"] > 0
