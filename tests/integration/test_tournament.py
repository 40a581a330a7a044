"""``cardarena tournament`` against a real server: duplicate deals, every rotation, Python bots
beside the Node.js example bot, and bots that crash, hang or play illegally, counted as faults
without stopping anything."""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.audit import audit_response
from cardarena.clients.cli import main, mainjob
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament import (
    TournamentConfig,
    TournamentError,
    parse_bot,
    run_tournament,
)
from cardarena.v1 import service_pb2 as spb

from ..serverproc import ServerProcess
from ..waiting import eventually

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = ROOT / "clients" / "examples" / "first_legal_bot.js"
HANGING_BOT = ROOT / "tests" / "tournament_bots.py"
SEED = "ab" * 32


@pytest.mark.skipif(shutil.which("node") is None, reason="the example bot needs node")
def test_a_tournament_with_misbehaving_bots_plays_every_match(
    tmp_path: Path, server_process: ServerProcess
) -> None:
    out_json, out_csv = tmp_path / "results.json", tmp_path / "standings.csv"
    bots = [
        "random",
        f"exec:first=node {NODE_BOT}",
        "crasher=tests.tournament_bots:Crasher",
        "illegal=tests.tournament_bots:IllegalMover",
        f"exec:hanger={sys.executable} {HANGING_BOT}",
    ]
    code = main(
        [
            "tournament",
            "--in-process",
            "--server",
            server_process.address,
            "--game",
            "pentathlon",
            "--players",
            "3",
            "--options",
            '{"rounds": ["queens"]}',
            *(arg for bot in bots for arg in ("--bot", bot)),
            "--deals",
            "2",
            "--concurrency",
            "8",
            "--decision-ms",
            "1500",
            "--seed",
            SEED,
            "--json",
            str(out_json),
            "--csv",
            str(out_csv),
            "--no-progress",
        ]
    )
    assert code == 0
    report = json.loads(out_json.read_text())
    pinned = [(m["match_id"], bytes.fromhex(m["last_hash"])) for m in report["matches"][:6]]
    asyncio.run(_audit_some(server_process.address, pinned))

    matches = report["matches"]
    assert len(matches) == 10 * 3 * 2  # C(5, 3) lineups x 3 rotations x 2 deals
    assert all(m["error"] is None for m in matches)
    _check_duplicates(matches)

    rows = {row["bot"]: row for row in report["standings"]}
    assert set(rows) == {"random", "first", "crasher", "illegal", "hanger"}
    assert all(row["matches"] == 36 and row["groups"] == 12 for row in rows.values())
    assert rows["random"]["crashes"] + rows["random"]["illegal"] + rows["random"]["timeouts"] == 0
    assert rows["first"]["crashes"] + rows["first"]["illegal"] + rows["first"]["timeouts"] == 0
    assert rows["crasher"]["crashes"] > 0 and rows["crasher"]["timeouts"] == 0
    assert rows["illegal"]["illegal"] > 0 and rows["illegal"]["crashes"] == 0
    assert rows["hanger"]["timeouts"] == 36  # once per match: then benched
    assert rows["hanger"]["fallbacks"] > rows["hanger"]["timeouts"]
    for row in rows.values():
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
        assert 0 <= row["win_rate"] <= 1
        assert row["sigma"] > 0

    with out_csv.open() as handle:
        table = list(csv.DictReader(handle))
    assert [r["bot"] for r in table] == [r["bot"] for r in report["standings"]]
    assert [int(r["rank"]) for r in table] == [1, 2, 3, 4, 5]


def _check_duplicates(matches: list[dict[str, Any]]) -> None:
    """Each group is one seed played in every rotation: each bot sits at each seat once."""
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for match in matches:
        groups[match["group"]].append(match)
    assert len(groups) == 20
    for members in groups.values():
        assert len(members) == 3
        assert len({m["seed"] for m in members}) == 1
        for seat in range(3):
            assert len({m["seats"][seat] for m in members}) == 3
        assert len({tuple(sorted(m["seats"])) for m in members}) == 1
    # One seed per duplicate group (docs/rules.md §4: group k plays on its own group seed).
    assert len({m["seed"] for m in matches}) == 20


async def _audit_some(address: str, pinned: list[tuple[str, bytes]]) -> None:
    """Moves the runner made for faulty bots are ordinary legal moves: the logs audit clean,
    each ending at the hash the runner recorded when its match ended."""
    async with ArenaClient(address) as client:
        for match_id, head in pinned:
            assert len(head) == 32
            log = await client.match_log(match_id)
            assert audit_response(log, match_id, head=head) is None
        assert audit_response(log, match_id, head=bytes(32)) is not None
        log.entries[5].event = log.entries[5].event + b"\x00"
        assert audit_response(log, match_id) is not None


def test_the_main_job_plays_audits_and_stops_the_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = mainjob.main(
        ["--game", "triathlon", "--deals", "2", "--mc-budget-ms", "2", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "cardarena listening on 127.0.0.1:" in out
    assert "triathlon, 3 players" in out and "95% CI" in out
    assert "6 matches audited: all clean" in out
    assert "exit code 0" in out and out.rstrip().endswith("all well")


def test_a_locked_server_plays_only_for_its_operator_and_a_cancelled_match_is_no_result(
    tmp_path: Path,
) -> None:
    """Without the operator token the runner stops at once (every match would be refused);
    with it every match is played, and one that the operator cancels midway is reported as
    failed instead of being counted with the totals it had reached."""
    token = "operator-" + "x" * 40
    bots = [parse_bot(f"s{i}=tests.tournament_bots:Slow") for i in range(3)]

    async def scenario(address: str) -> None:
        stranger = TournamentConfig(address=address, game="triathlon", bots=bots, deals=1)
        with pytest.raises(TournamentError, match="operator"):
            await run_tournament(stranger)
        config = TournamentConfig(
            address=address, game="triathlon", bots=bots, deals=1, operator_token=token
        )
        playing = asyncio.create_task(run_tournament(config))
        async with ArenaClient(address, operator_token=token) as client:

            async def running_matches() -> list[str]:
                listed = await client.stub.ListMatches(
                    spb.ListMatchesRequest(status=spb.MATCH_STATUS_RUNNING), timeout=10
                )
                return [m.match_id for m in listed.matches]

            running = await eventually(running_matches, within=60, what="a running match")
            cancelled = await client.cancel_match(running[0], reason="the test says so")
            assert cancelled.cancelled and cancelled.status == spb.MATCH_STATUS_ENDED
        result = await asyncio.wait_for(playing, 120)
        failed = {m.match_id: m.error for m in result.matches if not m.ok}
        assert list(failed) == [running[0]] and "cancelled" in (failed[running[0]] or "")
        assert sum(m.ok for m in result.matches) == len(result.matches) - 1

    with ServerProcess(tmp_path / "data", extra=["--admin-token", token]) as server:
        asyncio.run(scenario(server.address))
        assert token not in server.stderr_path.read_text()
