"""``cardarena tournament`` and ``cardarena bot connect`` as people run them: Ctrl-C detaches
and --attach finishes with the same results, misbehaving bots forfeit, an entrant plays from a
process of its own."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.cli import main
from cardarena.clients.client import ArenaClient
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess
from ..waiting import eventually
from .hosted import (
    CLI,
    NODE_BOT,
    ROOT,
    SILENT_BOT,
    create,
    standings,
    tournament_command,
)

pytestmark = pytest.mark.integration


def test_ctrl_c_detaches_the_launcher_and_attach_finishes_it_with_the_same_results(
    server: ServerProcess, tmp_path: Path
) -> None:
    """``cardarena tournament`` starts every bot as its own process; Ctrl-C detaches (the bots
    and the tournament go on), ``--attach`` follows it to the end and writes the results:
    with deterministic bots and the same seed, the results of an uninterrupted run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    calm = tmp_path / "calm.json"
    subprocess.run(
        tournament_command(server.address, "--json", str(calm)),
        env=env,
        capture_output=True,
        timeout=120,
        check=True,
    )
    launcher = subprocess.Popen(
        tournament_command(server.address),
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert launcher.stderr is not None
    tournament_id = ""
    for line in launcher.stderr:
        if line.startswith("tournament ") and " created on " in line:
            tournament_id = line.split()[1]
            break
    assert tournament_id

    async def started() -> bool:
        async with ArenaClient(server.address) as client:
            return (await client.tournaments.get(tournament_id)).finished >= 1

    run(eventually(started, within=60, what="a match played"), seconds=70)
    launcher.send_signal(signal.SIGINT)
    _, rest = launcher.communicate(timeout=30)
    assert launcher.returncode == 130
    assert f"--attach {tournament_id}" in rest
    results = tmp_path / "results.json"
    attached = subprocess.run(
        [
            *CLI,
            "tournament",
            "--server",
            server.address,
            "--attach",
            tournament_id,
            "--json",
            str(results),
            "--no-progress",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert attached.returncode == 0, attached.stderr
    assert standings(results) == standings(calm)
    assert "illegal" in attached.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="the example bot needs node")
def test_the_command_hosts_misbehaving_bots_and_they_forfeit(
    server: ServerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cardarena tournament`` (hosted: the default) with a Node.js bot, a random bot, and
    a bot that crashes, one that plays illegally and a program that never answers: the bad
    three forfeit every match and rank last; results and standings come from the server."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    out_json, out_csv = tmp_path / "results.json", tmp_path / "standings.csv"
    bots = [
        "random",
        f"exec:first=node {NODE_BOT}",
        "crasher=tests.tournament_bots:Crasher",
        "illegal=tests.tournament_bots:IllegalMover",
        f"exec:hanger={sys.executable} {SILENT_BOT}",
    ]
    code = main(
        [
            "tournament",
            "--server",
            server.address,
            "--game",
            "pentathlon",
            "--players",
            "3",
            "--options",
            '{"rounds": ["queens"]}',
            *(arg for bot in bots for arg in ("--bot", bot)),
            "--deals",
            "1",
            "--concurrency",
            "10",
            "--move-ms",
            "1500",
            "--json",
            str(out_json),
            "--csv",
            str(out_csv),
            "--bot-logs",
            str(tmp_path / "bots"),
            "--no-progress",
        ]
    )
    assert code == 0
    report = json.loads(out_json.read_text())
    assert report["tournament"]["finished"] == report["tournament"]["planned"] == 30
    rows = {row["bot"]: row for row in report["standings"]}
    assert all(rows[b]["matches"] == 18 for b in rows)
    for good in ("random", "first"):
        assert rows[good]["faults"] == rows[good]["forfeits"] == 0, rows[good]
    for bad in ("crasher", "illegal", "hanger"):
        assert rows[bad]["forfeits"] == 18, rows[bad]
        assert rows[bad]["wins"] == 0
    assert [r["bot"] for r in report["standings"]][:2] in (["random", "first"], ["first", "random"])
    groups: dict[int, list[dict[str, Any]]] = {}
    for match in report["matches"]:
        groups.setdefault(match["group"], []).append(match)
    assert len(groups) == 10  # C(5, 3) lineups, one deal
    for members in groups.values():
        assert len(members) == 3
        for seat in range(3):
            assert len({m["seats"][seat] for m in members}) == 3
    with out_csv.open() as handle:
        table = list(csv.DictReader(handle))
    assert [r["bot"] for r in table] == [r["bot"] for r in report["standings"]]
    # Each turn told the Node.js bot how much of its 1.5 s move was left (it logs it).
    left = [
        int(n)
        for n in re.findall(r"(\d+) ms left", (tmp_path / "bots" / "first.exec.log").read_text())
    ]
    assert left and all(0 < n <= 1500 for n in left), left[:10]


def test_a_bot_connects_from_a_process_of_its_own(server: ServerProcess, tmp_path: Path) -> None:
    """``cardarena bot connect``, as an entrant on another machine would run it (its key in
    the environment, not on the command line), plays a whole tournament."""

    async def opened() -> tuple[str, list[str]]:
        async with ArenaClient(server.address) as client:
            created = await create(
                client, ("one", "two", "three"), "crazy_sixes", deals=2, move_ms=10_000
            )
            return created.tournament.tournament_id, list(created.entrant_keys)

    tid, keys = run(opened(), seconds=30)
    command = [
        sys.executable,
        "-c",
        "from cardarena.clients.cli import main; raise SystemExit(main())",
    ]
    bots = [
        subprocess.Popen(
            [*command, "bot", "connect", "--server", server.address, "--tournament", tid, spec],
            env={**os.environ, "CARDARENA_ENTRANT_KEY": key},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for key, spec in zip(keys, ("random", "rules", "random"), strict=True)
    ]
    outputs = [bot.communicate(timeout=120) for bot in bots]
    assert [bot.returncode for bot in bots] == [0, 0, 0], outputs
    assert all(f"tournament {tid} ended" in out for out, _ in outputs)
    assert all("6 matches played, 0 failures" in err for _, err in outputs)

    async def final() -> tpb.TournamentInfo:
        async with ArenaClient(server.address) as client:
            return await client.tournaments.get(tid)

    info = run(final(), seconds=30)
    assert info.finished == info.planned == 6
    assert all(s.faults == 0 for s in info.standings)
