"""Issue 31's ladder through the whole server and the command line: opened with ``cardarena
ladder create``, played by entrants that stay connected (one replaced by a new version
mid-run), the server killed (-9) and restarted in the middle; the board puts the rule bot above
the random ones, the new version starts afresh and the old is retired, a signed snapshot
written by ``cardarena ladder snapshot`` audits clean with ``cardarena audit --ladder``, and
closing ends every entrant's stream. Crazy Sixes at four seats, where the rule bot beats
random ones by a wide margin in few matches (``scripts/ladder_order.py``; in Triathlon the
order over 60 matches was a matter of luck now and then)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.clients.bots import Bot
from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.bots.rules_bot import RuleBot
from cardarena.clients.cli import main
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament.entrant import EntrantReport, LadderEntry, play_entrant
from cardarena.v1 import ladder_pb2 as lpb

from ..calls import run
from ..serverproc import ServerProcess
from ..waiting import eventually

pytestmark = pytest.mark.integration

ENTRANTS = ("r1", "r2", "rules", "v")


def playing(
    client: ArenaClient,
    ladder_id: str,
    key: str,
    bot: Callable[[], Bot],
    version: str,
    capacity: int,
) -> asyncio.Task[EntrantReport]:
    return asyncio.create_task(
        play_entrant(
            client,
            ladder_id,
            key,
            lambda _assigned: PythonDecider(bot),
            reconnect_for=60,
            capacity=capacity,
            ladder=LadderEntry(version),
        )
    )


def test_a_ladder_survives_a_restart_and_a_new_version_and_its_snapshot_audits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, keys = tmp_path / "data", tmp_path / "keys"
    first = ServerProcess(data).start()
    address = first.address
    argv = ["ladder", "create", "--server", address, "--game", "crazy_sixes", "--players", "4"]
    argv += ["--keys", str(keys)]
    argv += [
        "--move-ms",
        "3000",
        "--concurrency",
        "6",
        "--creator-secret-file",
        str(tmp_path / "c"),
    ]
    assert main([*argv, *(a for name in ENTRANTS for a in ("--entrant", name))]) == 0
    ladder_id = capsys.readouterr().out.strip()
    key = {name: (keys / f"{name}.key").read_text().strip() for name in ENTRANTS}
    second: ServerProcess | None = None

    async def scenario() -> lpb.LadderInfo:
        nonlocal second
        async with ArenaClient(address, retry_for=60) as client:
            tasks = {
                "r1": playing(client, ladder_id, key["r1"], RandomBot, "", 1),
                "r2": playing(client, ladder_id, key["r2"], RandomBot, "", 2),
                "rules": playing(client, ladder_id, key["rules"], RuleBot, "", 2),
                "v": playing(client, ladder_id, key["v"], RandomBot, "v1", 1),
            }

            async def counted(at_least: int) -> bool:
                return (await client.ladders.get(ladder_id)).counted >= at_least

            await eventually(lambda: counted(15), within=90, what="15 matches counted")
            first.kill()  # -9, matches running
            await asyncio.sleep(1.0)
            second = ServerProcess(data, listen=address).start()
            await eventually(lambda: counted(30), within=90, what="30 matches counted")
            tasks["v"].cancel()  # a new version of v replaces the old
            with contextlib.suppress(asyncio.CancelledError):
                await tasks["v"]
            tasks["v"] = playing(client, ladder_id, key["v"], RandomBot, "v2", 1)

            async def new_version_counted() -> bool:
                board = (await client.ladders.get(ladder_id)).board
                return any(r.player == "v@v2" and r.matches >= 3 for r in board)

            await eventually(new_version_counted, within=90, what="v@v2 on the board")
            await eventually(lambda: counted(60), within=120, what="60 matches counted")
            secret = (tmp_path / "c").read_text().strip()
            closed = await client.ladders.close(ladder_id, secret=secret)
            reports = await asyncio.wait_for(asyncio.gather(*tasks.values()), 60)
            assert all(r.final is not None for r in reports)
            return closed

    try:
        closed = run(scenario(), seconds=400)
        assert closed.status == lpb.LADDER_STATUS_CLOSED
        rows = {row.player: row for row in closed.board}
        assert rows["v@v1"].retired and not rows["v@v2"].retired and rows["v@v2"].matches >= 3
        assert rows["rules"].mu > max(rows["r1"].mu, rows["r2"].mu), rows
        snapshot = tmp_path / "snapshot.json"
        assert (
            main(["ladder", "snapshot", ladder_id, "--server", address, "--out", str(snapshot)])
            == 0
        )
        assert main(["ladder", "board", ladder_id, "--server", address]) == 0
        assert "retired" in capsys.readouterr().out
        assert second is not None
        audit_snapshot(snapshot, data, capsys)
        edited_snapshots_are_findings(snapshot, capsys)
    finally:
        first.kill()
        if second is not None:
            second.kill()


def audit_snapshot(snapshot: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``cardarena audit --ladder`` of ``snapshot`` with the public key of the server whose
    data is ``data``: clean, signatures verified; what it printed."""
    keyfile = snapshot.with_name("server.pub")
    main(["serve", "--print-public-key", "--data-dir", str(data)])
    keyfile.write_text(capsys.readouterr().out)
    assert main(["audit", "--ladder", str(snapshot), "--key", str(keyfile)]) == 0
    out = capsys.readouterr().out
    assert "signatures verified" in out and "all clean" in out, out
    return out


def edited_snapshots_are_findings(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A snapshot edited into nonsense is a finding or a refusal naming the field, never a
    traceback (an adversarial review's finds: a server that is a number, a ladder of no
    players, which divided by zero)."""
    original = json.loads(snapshot.read_text())
    edited = snapshot.with_name("edited.json")
    numbered = {**original, "server": 5}
    edited.write_text(json.dumps(numbered))
    assert main(["audit", "--ladder", str(edited)]) == 2
    assert "its server is 5, not HOST:PORT" in capsys.readouterr().err
    nobody = json.loads(json.dumps(original))
    nobody["snapshot"]["ladder"]["players"] = 0
    edited.write_text(json.dumps(nobody))
    assert main(["audit", "--ladder", str(edited)]) == 1
    assert "seats 0 players" in capsys.readouterr().out
