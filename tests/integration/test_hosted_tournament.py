"""Tournaments hosted by the server: entrants connect with their keys and play what they are
seated in; a crashing, a hanging and an illegal-move bot each rank below random bots."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.clients.audit import audit_log
from cardarena.clients.bots import Bot, SeatState
from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.cli import main
from cardarena.clients.client import ArenaClient, Entrant, Ticket
from cardarena.clients.tournament.entrant import EntrantReport, MakeDecider, play_entrant
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess
from ..waiting import eventually

pytestmark = pytest.mark.integration


class AlwaysCrashes:
    name = "crasher"

    def choose(self, state: SeatState) -> int:
        raise ZeroDivisionError("a bug in the bot")


class Hangs:
    name = "hanger"

    def choose(self, state: SeatState) -> int:
        time.sleep(3600)
        raise AssertionError("unreachable")


class Illegal:
    name = "illegal"

    def choose(self, state: SeatState) -> int:
        return 999


def _decider(factory: Callable[[], Bot]) -> PythonDecider:
    return PythonDecider(factory)


def _makers(bots: Mapping[str, Callable[[], Bot]]) -> list[MakeDecider]:
    """One decider factory per entrant: a fresh bot for every match."""

    def maker(factory: Callable[[], Bot]) -> MakeDecider:
        return lambda _assigned: _decider(factory)

    return [maker(factory) for factory in bots.values()]


async def _tournament(
    address: str,
    bots: Mapping[str, Callable[[], Bot]],
    *,
    deals: int = 1,
    move_ms: int = 300,
    game: str = "crazy_sixes",
) -> tuple[tpb.TournamentInfo, list[EntrantReport]]:
    async with ArenaClient(address) as client:
        created = await client.tournaments.create(
            game,
            [Entrant(name) for name in bots],
            players=3,
            deals=deals,
            move_ms=move_ms,
            concurrency=8,
            forfeit_after=3,
            seed=bytes(range(32)),
        )
        tid = created.tournament.tournament_id
        keys = list(created.entrant_keys)
        assert all(keys)
        reports = await asyncio.gather(
            *(
                play_entrant(client, tid, key, make)
                for key, make in zip(keys, _makers(bots), strict=True)
            )
        )
        final = await client.tournaments.get(tid, matches=True)
        for line in final.matches:
            report = audit_log(await client.match_log(line.match_id))
            assert report.ok, report.failure
        return final, list(reports)


def _rank(final: tpb.TournamentInfo) -> list[str]:
    return [s.entrant for s in final.standings]


def test_a_crashing_bot_forfeits_and_ranks_below_random_bots(server: ServerProcess) -> None:
    final, reports = run(
        _tournament(
            server.address, {"random-a": RandomBot, "random-b": RandomBot, "crasher": AlwaysCrashes}
        ),
        seconds=120,
    )
    assert final.status == tpb.TOURNAMENT_STATUS_ENDED
    assert final.end_reason == "every planned match was played"
    assert final.finished == final.planned == 3
    rows = {s.entrant: s for s in final.standings}
    assert rows["crasher"].forfeits == 3 and rows["crasher"].wins == 0
    assert rows["crasher"].faults == 9  # three time-outs a match, then the server plays it
    assert _rank(final)[-1] == "crasher"
    assert {r.entrant for r in reports} == {"random-a", "random-b", "crasher"}


def test_a_hanging_and_an_illegal_bot_rank_below_random_bots(server: ServerProcess) -> None:
    final, _ = run(
        _tournament(
            server.address,
            {"random-a": RandomBot, "hanger": Hangs, "illegal": Illegal, "random-b": RandomBot},
            move_ms=200,
        ),
        seconds=180,
    )
    assert final.finished == final.planned == 12  # 4 lineups of 3, in 3 rotations
    rows = {s.entrant: s for s in final.standings}
    for bad in ("hanger", "illegal"):
        assert rows[bad].forfeits == rows[bad].matches == 9
        assert rows[bad].wins == 0
    assert set(_rank(final)[-2:]) == {"hanger", "illegal"}


class FirstLegal:
    name = "first"

    def choose(self, state: SeatState) -> int:
        return state.legal[0]


class LastLegal:
    name = "last"

    def choose(self, state: SeatState) -> int:
        return state.legal[-1]


DETERMINISTIC: dict[str, Callable[[], Bot]] = {
    "first-a": FirstLegal,
    "last": LastLegal,
    "first-b": FirstLegal,
}


def _results(final: tpb.TournamentInfo) -> list[tuple[str, float, float, int]]:
    return [(s.entrant, round(s.mean, 9), s.wins, s.matches) for s in final.standings]


def test_kill_9_in_the_middle_of_a_tournament_loses_nothing(tmp_path: Path) -> None:
    """The same tournament, once uninterrupted and once with the server killed (-9) while its
    matches run: after the restart it finishes the planned matches, exactly, every log audits
    clean, and the standings are those of the uninterrupted run."""
    with ServerProcess(tmp_path / "calm") as calm:
        expected, _ = run(
            _tournament(calm.address, DETERMINISTIC, deals=3, move_ms=10_000), seconds=120
        )
    assert expected.finished == expected.planned == 9
    data = tmp_path / "killed"
    first = ServerProcess(data).start()
    address = first.address

    async def scenario() -> tpb.TournamentInfo:
        async with ArenaClient(address, retry_for=60) as client:
            created = await client.tournaments.create(
                "crazy_sixes",
                [Entrant(n) for n in DETERMINISTIC],
                players=3,
                deals=3,
                move_ms=10_000,  # time enough to reconnect: a time-out would change a result
                concurrency=8,
                seed=bytes(range(32)),
            )
            tid = created.tournament.tournament_id
            entrants = [
                asyncio.create_task(play_entrant(client, tid, key, make, reconnect_for=60))
                for key, make in zip(created.entrant_keys, _makers(DETERMINISTIC), strict=True)
            ]

            async def under_way() -> bool:
                return (await client.tournaments.get(tid)).finished >= 2

            await eventually(under_way, within=60, what="two matches played")
            first.kill()
            second = ServerProcess(data, listen=address).start()
            try:
                await asyncio.wait_for(asyncio.gather(*entrants), timeout=120)
                final = await client.tournaments.get(tid, matches=True)
                faults: list[str] = []
                for line in final.matches:
                    log = await client.match_log(line.match_id)
                    report = audit_log(log)
                    assert report.ok, report.failure
                    for entry in log.entries:
                        event = pb.Event.FromString(entry.event)
                        if event.WhichOneof("kind") in ("timed_out", "seat_faulted"):
                            faults.append(f"{line.index}:{event}")
                logged = [
                    line
                    for line in (data / "server.log").read_text().splitlines()
                    if "timed_out" in line or "listening" in line or "resumed" in line
                ]
                assert not faults, (faults, logged)
                return final
            finally:
                second.kill()

    final = asyncio.run(scenario())
    assert final.status == tpb.TOURNAMENT_STATUS_ENDED
    assert final.finished == final.planned == 9 and final.failed == 0
    assert all(s.faults == 0 for s in final.standings), final.standings
    assert _results(final) == _results(expected), final.matches


CREATOR = "c" * 40


async def _until_match(stream: Any) -> Any:
    """The entrant stream's messages up to its first ``match``."""
    async for message in stream:
        yield message
        if message.WhichOneof("kind") == "match":
            return


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
                told = [m async for m in _until_match(entered)]
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


ROOT = Path(__file__).resolve().parents[2]


CLI = [sys.executable, "-c", "from cardarena.clients.cli import main; raise SystemExit(main())"]
DETERMINISTIC_BOTS = [
    "first=tests.tournament_bots:FirstLegal",
    "last=tests.tournament_bots:LastLegal",
    "illegal=tests.tournament_bots:IllegalMover",
]


def _tournament_command(address: str, *extra: str) -> list[str]:
    return [
        *CLI,
        "tournament",
        "--server",
        address,
        "--game",
        "crazy_sixes",
        "--players",
        "3",
        *(arg for bot in DETERMINISTIC_BOTS for arg in ("--bot", bot)),
        "--deals",
        "4",
        "--move-ms",
        "5000",
        "--concurrency",
        "2",
        "--seed",
        "cd" * 32,
        "--no-progress",
        *extra,
    ]


def _standings(path: Path) -> list[tuple[Any, ...]]:
    report = json.loads(path.read_text())
    assert report["tournament"]["finished"] == report["tournament"]["planned"] == 12
    assert len(report["matches"]) == 12 and all(m["last_hash"] for m in report["matches"])
    return [
        (r["bot"], r["matches"], r["mean"], r["wins"], r["faults"], r["forfeits"])
        for r in report["standings"]
    ]


def test_ctrl_c_detaches_the_launcher_and_attach_finishes_it_with_the_same_results(
    server: ServerProcess, tmp_path: Path
) -> None:
    """``cardarena tournament`` starts every bot as its own process; Ctrl-C detaches (the bots
    and the tournament go on), ``--attach`` follows it to the end and writes the results:
    with deterministic bots and the same seed, the results of an uninterrupted run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    calm = tmp_path / "calm.json"
    subprocess.run(
        _tournament_command(server.address, "--json", str(calm)),
        env=env,
        capture_output=True,
        timeout=120,
        check=True,
    )
    launcher = subprocess.Popen(
        _tournament_command(server.address),
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
    assert _standings(results) == _standings(calm)
    assert "illegal" in attached.stdout


NODE_BOT = ROOT / "clients" / "examples" / "first_legal_bot.js"
SILENT_BOT = ROOT / "tests" / "tournament_bots.py"


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


def test_a_locked_server_hosts_only_for_its_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the operator token the command stops at once with the server's refusal; with
    it the tournament is played, and a match the operator cancels midway counts as failed,
    not with the totals it had reached."""
    token = "operator-" + "x" * 40
    with ServerProcess(tmp_path / "data", extra=["--admin-token", token]) as locked:
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
                created = await client.tournaments.create(
                    "triathlon",
                    [Entrant(n) for n in ("a", "b", "c")],
                    deals=2,
                    move_ms=60_000,
                    concurrency=6,
                )
                tid, keys = created.tournament.tournament_id, list(created.entrant_keys)

                async def started() -> str:
                    info = await client.tournaments.get(tid, matches=True)
                    return next((m.match_id for m in info.matches if m.match_id), "")

                victim = await eventually(started, within=30, what="a match started")
                await client.cancel_match(victim, reason="the operator says so")
                await asyncio.gather(
                    *(
                        play_entrant(client, tid, key, make)
                        for key, make in zip(
                            keys, _makers(dict.fromkeys("abc", RandomBot)), strict=True
                        )
                    )
                )
                return await client.tournaments.get(tid, matches=True)

        final = run(scenario(), seconds=120)
        assert final.failed == 1 and final.finished == final.planned - 1 == 5
        assert [m.cancelled for m in final.matches].count(True) == 1
        assert token not in locked.stderr_path.read_text()


def test_a_duplicate_groups_seed_stays_secret_until_its_last_rotation_ends(
    server: ServerProcess,
) -> None:
    """One rotation at a time: when the first has ended and the second is being played,
    nothing the server returns about the first (GetMatch, ListMatches, GetMatchLog, its
    spectator stream, the tournament) shows the seed that deals the second its cards; once
    the group is done, every rotation shows the one seed, and its log audits clean."""
    hold = threading.Event()

    class HeldInTheSecondMatch:
        name = "held"

        def __init__(self) -> None:
            self.first_turn = True

        def choose(self, state: SeatState) -> int:
            if self.first_turn and state.match_id == second_match[0]:
                hold.wait(30)
            self.first_turn = False
            return state.legal[0]

    second_match: list[str] = [""]

    async def scenario() -> None:
        async with ArenaClient(server.address) as client:
            created = await client.tournaments.create(
                "triathlon",
                [Entrant(n) for n in ("a", "b", "c")],
                deals=1,
                move_ms=60_000,
                concurrency=1,
                creator_secret=CREATOR,
            )
            tid = created.tournament.tournament_id
            bots: dict[str, Callable[[], Bot]] = {
                "a": HeldInTheSecondMatch,
                "b": FirstLegal,
                "c": FirstLegal,
            }

            async def two_started() -> list[str]:
                info = await client.tournaments.get(tid, matches=True)
                ids = [m.match_id for m in info.matches if m.match_id]
                return ids if len(ids) >= 2 else []

            playing = [
                asyncio.create_task(play_entrant(client, tid, key, make))
                for key, make in zip(created.entrant_keys, _makers(bots), strict=True)
            ]
            first, second = (await eventually(two_started, within=60, what="two rotations"))[:2]
            second_match[0] = second
            try:
                info = await client.get_match(first)
                assert info.status == spb.MATCH_STATUS_ENDED and info.seed == b""
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await client.match_log(first)
                assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert "duplicate group" in (refused.value.details() or "")
                listed = await client.stub.ListMatches(spb.ListMatchesRequest(), timeout=10)
                ours = [m for m in listed.matches if m.tournament_id == tid]
                assert ours and all(m.seed == b"" for m in ours)
                kinds = []
                async for item in client.stub.WatchMatch(spb.WatchMatchRequest(match_id=first)):
                    if item.WhichOneof("kind") == "event":
                        kinds.append(item.event.WhichOneof("kind"))
                assert "match_ended" in kinds and "seed_revealed" not in kinds
                assert (await client.tournaments.get(tid)).seed == b""
            finally:
                hold.set()
            await asyncio.gather(*playing)
            final = await client.tournaments.get(tid, matches=True)
            seeds = {(await client.get_match(m.match_id)).seed for m in final.matches}
            assert len(seeds) == 1 and len(seeds.pop()) == 32
            for line in final.matches:
                log = await client.match_log(line.match_id)
                assert audit_log(log, head=line.last_hash).ok

    run(scenario(), seconds=120)


def test_the_stop_rule_ends_a_tournament_once_it_decides(server: ServerProcess) -> None:
    """An SPRT of the rule bot against a random one (H1: the rule bot scores 5 points a
    match more): the tournament stops long before its 60 planned groups, says which
    hypothesis it accepted, and every match it started was played to its end."""
    from cardarena.clients.bots.rules_bot import RuleBot
    from cardarena.clients.client import StopRule

    async def scenario() -> tpb.TournamentInfo:
        async with ArenaClient(server.address) as client:
            created = await client.tournaments.create(
                "triathlon",
                [Entrant(n) for n in ("rules", "random-a", "random-b")],
                deals=60,
                move_ms=60_000,
                concurrency=6,
                stop=StopRule(a="rules", b="random-a", d0=0.0, d1=5.0),
            )
            tid = created.tournament.tournament_id
            bots: dict[str, Callable[[], Bot]] = {
                "rules": RuleBot,
                "random-a": RandomBot,
                "random-b": RandomBot,
            }
            await asyncio.gather(
                *(
                    play_entrant(client, tid, key, make)
                    for key, make in zip(created.entrant_keys, _makers(bots), strict=True)
                )
            )
            return await client.tournaments.get(tid, matches=True)

    final = run(scenario(), seconds=180)
    assert final.status == tpb.TOURNAMENT_STATUS_ENDED
    assert final.end_reason.startswith("the stop rule accepted H1"), final.end_reason
    assert final.sprt.verdict == "H1" and final.sprt.llr >= final.sprt.upper
    assert final.finished < final.planned == 180 and final.failed == 0
    started = [m for m in final.matches if m.match_id]
    assert len(started) == final.finished  # none left running, none cut short
    assert all(m.status == spb.MATCH_STATUS_ENDED and m.last_hash for m in started)


def test_a_bot_connects_from_a_process_of_its_own(server: ServerProcess, tmp_path: Path) -> None:
    """``cardarena bot connect``, as an entrant on another machine would run it (its key in
    the environment, not on the command line), plays a whole tournament."""

    async def create() -> tuple[str, list[str]]:
        async with ArenaClient(server.address) as client:
            created = await client.tournaments.create(
                "crazy_sixes",
                [Entrant(n) for n in ("one", "two", "three")],
                deals=2,
                move_ms=10_000,
            )
            return created.tournament.tournament_id, list(created.entrant_keys)

    tid, keys = run(create(), seconds=30)
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


def test_a_whole_tournament_audits_clean_and_a_doctored_one_does_not(
    server: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cardarena audit --tournament``: every log pinned to its published hash, the schedule
    the revealed seed plans, the standings recomputed from the logs. A server that publishes
    other standings, or a log that is not the one it pinned, is caught."""
    from cardarena.clients.audit.tournament import audit_tournament
    from cardarena.clients.client.tournaments import TournamentCalls

    async def scenario() -> str:
        async with ArenaClient(server.address) as client:
            created = await client.tournaments.create(
                "triathlon",
                [Entrant(n) for n in ("a", "b", "c")],
                deals=2,
                move_ms=1_000,
            )
            tid = created.tournament.tournament_id
            bots: dict[str, Callable[[], Bot]] = {"a": FirstLegal, "b": LastLegal, "c": Illegal}
            await asyncio.gather(
                *(
                    play_entrant(client, tid, key, make)
                    for key, make in zip(created.entrant_keys, _makers(bots), strict=True)
                )
            )
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
    assert main(["audit", "--server", server.address, "--tournament", tid]) == 0
