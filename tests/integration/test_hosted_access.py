"""Who may do what to a hosted tournament: strangers and wrong keys are refused, nothing
secret reaches the log, a locked server hosts for its operator only, and a whole tournament
is audited as an outsider would."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.clients.bots import Bot
from cardarena.clients.cli import main
from cardarena.clients.client import ArenaClient, Entrant, Ticket
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess
from ..waiting import eventually
from .hosted import (
    CREATOR,
    RANDOMS,
    FirstLegal,
    Illegal,
    LastLegal,
    create,
    play_all,
    until_match,
)

pytestmark = pytest.mark.integration


def test_a_stranger_cannot_take_a_seat_and_keys_never_reach_the_log(
    tmp_path: Path,
) -> None:
    key = "k" * 40
    with ServerProcess(tmp_path / "data") as served:

        async def scenario() -> None:
            async with ArenaClient(served.address) as client:
                created = await client.tournaments.create(
                    "triathlon",
                    [Entrant("a", key), Entrant("b"), Entrant("c")],
                    deals=1,
                    move_ms=60_000,
                    creator_secret=CREATOR,
                    entry_ms=1,  # no entrant enters: the first match starts at once
                )
                tid = created.tournament.tournament_id
                assert created.entrant_keys[0] == ""  # given, not drawn

                async def first_match() -> str:
                    info = await client.tournaments.get(tid, matches=True)
                    return next((m.match_id for m in info.matches if m.match_id), "")

                match_id = await eventually(first_match, within=30, what="a match started")
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await client.join(match_id, seat=0, name="stranger")
                assert refused.value.code() in (
                    grpc.StatusCode.PERMISSION_DENIED,
                    grpc.StatusCode.ALREADY_EXISTS,
                    grpc.StatusCode.FAILED_PRECONDITION,
                )
                with pytest.raises(grpc.aio.AioRpcError) as wrong:
                    async for _ in client.tournaments.enter(tid, "x" * 40):
                        pass
                assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
                with pytest.raises(grpc.aio.AioRpcError) as anyone:
                    await client.tournaments.cancel(tid, reason="mine now", secret="y" * 40)
                assert anyone.value.code() == grpc.StatusCode.PERMISSION_DENIED
                entered = client.tournaments.enter(tid, key)
                told = [m async for m in until_match(entered)]
                entered.cancel()
                seat = told[-1].match
                cancelled = await client.tournaments.cancel(tid, reason="enough", secret=CREATOR)
                assert cancelled.cancelled and cancelled.status == tpb.TOURNAMENT_STATUS_ENDED
                # A seat of a cancelled match can no longer act (its log is final), whatever
                # it sends: it is told the match ended, before its action is looked at.
                before = await client.get_match(seat.match_id)
                with pytest.raises(grpc.aio.AioRpcError) as late:
                    await client.submit(
                        Ticket(seat.match_id, seat.seat, seat.token), 0, before.last_seq
                    )
                assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert "ended" in (late.value.details() or "")
                assert (await client.get_match(seat.match_id)).last_seq == before.last_seq
                after = await client.tournaments.get(tid, matches=True)
                for line in after.matches:
                    if line.match_id:
                        log = await client.match_log(line.match_id)
                        kinds = [
                            pb.Event.FromString(e.event).WhichOneof("kind") for e in log.entries
                        ]
                        assert kinds[-2:] == ["match_cancelled", "seed_revealed"]

        run(scenario(), seconds=60)
    logged = served.stderr_path.read_text()
    assert key not in logged and CREATOR not in logged
    assert "tournament_created" in logged


def test_a_locked_server_hosts_only_for_its_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the operator token the command stops at once with the server's refusal; with
    it the tournament is played, and a match the operator cancels midway counts as failed,
    not with the totals it had reached."""
    token = "operator-" + "x" * 40
    with ServerProcess(tmp_path / "data", extra=[f"--admin-token={token}"]) as locked:
        refused = main(
            [
                "tournament",
                "--server",
                locked.address,
                "--game",
                "triathlon",
                "--bot",
                "random",
                "--bot",
                "r2=random",
                "--bot",
                "r3=random",
                "--no-progress",
            ]
        )
        assert refused == 2
        assert "UNAUTHENTICATED" in capsys.readouterr().err

        async def scenario() -> tpb.TournamentInfo:
            async with ArenaClient(locked.address, operator_token=token) as client:
                created = await create(
                    client,
                    RANDOMS,
                    deals=2,
                    move_ms=60_000,
                    concurrency=6,
                    entry_ms=1,  # the entrants enter after a match is cancelled
                )
                tid = created.tournament.tournament_id

                async def started() -> str:
                    info = await client.tournaments.get(tid, matches=True)
                    return next((m.match_id for m in info.matches if m.match_id), "")

                victim = await eventually(started, within=30, what="a match started")
                await client.cancel_match(victim, reason="the operator says so")
                await play_all(client, created, RANDOMS)
                return await client.tournaments.get(tid, matches=True)

        final = run(scenario(), seconds=120)
        assert final.failed == 1 and final.finished == final.planned - 1 == 5
        assert [m.cancelled for m in final.matches].count(True) == 1
        assert token not in locked.stderr_path.read_text()


def test_a_whole_tournament_audits_clean_and_a_doctored_one_does_not(
    server: ServerProcess, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``cardarena audit --tournament``: every log pinned to its published hash, the schedule
    the revealed seed plans, the standings recomputed from the logs. A server that publishes
    other standings, or a log that is not the one it pinned, is caught."""
    from cardarena.clients.audit.tournament import audit_tournament
    from cardarena.clients.client.tournaments import TournamentCalls

    async def scenario() -> str:
        async with ArenaClient(server.address) as client:
            bots: dict[str, Callable[[], Bot]] = {"a": FirstLegal, "b": LastLegal, "c": Illegal}
            created = await create(client, bots, deals=2, move_ms=1_000)
            tid = created.tournament.tournament_id
            await play_all(client, created, bots)
            clean = await audit_tournament(client, tid)
            assert clean.ok and clean.audited == clean.matches == 6, clean.findings

            real_get = TournamentCalls.get

            async def doctored(self: TournamentCalls, tournament_id: str, **kw: Any) -> Any:
                info = await real_get(self, tournament_id, **kw)
                info.standings[0].wins += 1  # a server that favours its first entrant
                info.matches[3].last_hash = bytes(32)  # and pins another log
                return info

            monkeypatch.setattr(TournamentCalls, "get", doctored)
            caught = await audit_tournament(client, tid)
            assert not caught.ok
            assert any("wins" in f for f in caught.findings), caught.findings
            assert any("match 3" in f for f in caught.findings), caught.findings
            return tid

    tid = run(scenario(), seconds=120)
    monkeypatch.undo()
    kept = tmp_path / "logs"
    assert (
        main(["audit", "--server", server.address, "--tournament", tid, "--save-dir", str(kept)])
        == 0
    )
    saved = sorted(kept.glob("*.pb"))
    assert len(saved) == 6 and (kept / "tournament.json").is_file()
    assert main(["audit", str(saved[0])]) == 0  # audited again, without the server
    one = tmp_path / "one.json"
    assert (
        main(["audit", "--server", server.address, "--match", saved[1].stem, "--save", str(one)])
        == 0
    )
    assert main(["audit", str(one)]) == 0
