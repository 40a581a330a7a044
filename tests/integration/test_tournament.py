"""The main job end to end, and the older in-process runner (``run_tournament``, kept as the
tournament benchmark's peer) against a locked server. The hosted tournaments that
``cardarena tournament`` runs are tested in ``test_hosted_tournament.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cardarena.clients.cli import mainjob
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
    assert "6 matches audited, schedules and standings recomputed: all clean" in out
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

    with ServerProcess(tmp_path / "data", extra=[f"--admin-token={token}"]) as server:
        asyncio.run(scenario(server.address))
        assert token not in server.stderr_path.read_text()
