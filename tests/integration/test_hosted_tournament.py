"""Tournaments hosted by the server: a crashing, a hanging and an illegal-move bot each forfeit
and rank below random bots; a kill -9 loses nothing; the stop rule ends a tournament; a
duplicate group's seed stays secret until its last rotation ends."""

from __future__ import annotations

import asyncio
import io
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from cardarena.clients.audit import audit_log
from cardarena.clients.bots import Bot, SeatState
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess
from ..waiting import eventually
from .hosted import (
    CREATOR,
    DETERMINISTIC,
    AlwaysCrashes,
    FirstLegal,
    Hangs,
    Illegal,
    Scattered,
    create,
    entrants,
    play_all,
    rank,
    results,
    tournament,
)

pytestmark = pytest.mark.integration


def test_a_crashing_bot_forfeits_and_ranks_below_random_bots(server: ServerProcess) -> None:
    final, reports = run(
        tournament(
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
    assert rank(final)[-1] == "crasher"
    assert {r.entrant for r in reports} == {"random-a", "random-b", "crasher"}


def test_a_hanging_and_an_illegal_bot_forfeit_every_match_and_win_none(
    server: ServerProcess,
) -> None:
    """Not their rank: the standings rank by mean score, and a forfeited seat, played on by
    the server, can score better than a random bot (the deals come from entrants' entropy, so
    that happened in one CI run of five). What the rules do guarantee: a forfeit wins nothing,
    so every match is won by a random bot."""
    final, _ = run(
        tournament(
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
    # The fault columns are filled from the logs, by kind (they were always empty).
    assert rows["hanger"].timeouts == rows["hanger"].faults == 27
    assert rows["hanger"].refused_actions == rows["hanger"].disconnects == 0
    illegal = rows["illegal"]  # a refused action, then the clock on the same turn: both count
    assert illegal.refused_actions > 0 and illegal.disconnects == 0
    assert illegal.refused_actions + illegal.timeouts == illegal.faults == 27
    assert rows["random-a"].wins + rows["random-b"].wins >= final.planned


def test_a_tournament_every_seat_forfeits_says_so_in_every_summary(
    server: ServerProcess,
) -> None:
    """Three entrants that only ever send illegal moves: every match is played out by the
    server and won by nobody. The summary must say void, not just "played": the counts, each
    match's status, the printed line and the audit of those counts."""
    from cardarena.clients.audit.tournament import audit_fetched
    from cardarena.clients.logs.bundle import fetch_logs
    from cardarena.clients.tournament.hosted_report import hosted_json, print_hosted

    bots: dict[str, Callable[[], Bot]] = dict.fromkeys(("x", "y", "z"), Illegal)
    final, _ = run(tournament(server.address, bots), seconds=120)
    assert final.finished == final.planned == 3 and final.failed == 0
    assert final.void_matches == 3 and final.forfeits == 9
    written = hosted_json(final)
    assert [m["status"] for m in written["matches"]] == ["void"] * 3
    assert written["tournament"]["void_matches"] == 3
    out = io.StringIO()
    print_hosted(final, out)
    assert "3 of 3 matches played, 3 of them void (every seat forfeited), 9 seat forfeits" in (
        out.getvalue()
    )

    async def audited() -> list[str]:
        async with ArenaClient(server.address) as client:
            logs = await fetch_logs(client, [m.match_id for m in final.matches])
        honest = audit_fetched(final, logs)
        lying = tpb.TournamentInfo()
        lying.CopyFrom(final)
        lying.void_matches = 0
        return [*honest.findings, "--", *audit_fetched(lying, logs).findings]

    findings = run(audited(), seconds=60)
    assert findings == ["--", "the tournament's void_matches is 0, its logs give 3"]


MOVE_MS = 300
OUTAGE_S = 1.5
"""The kill test's move clock, and how long its server stays down: five clocks' worth."""


def test_kill_9_in_the_middle_of_a_tournament_loses_nothing_and_charges_no_bot(
    tmp_path: Path,
) -> None:
    """The same tournament, once uninterrupted and once with the server killed (-9) while its
    matches run and down for several move clocks: after the restart it finishes the planned
    matches, exactly, every log audits clean, no seat is charged a fault for the outage (the
    bots were still reconnecting: the reconnection window is the host's, not theirs), and the
    standings are those of the uninterrupted run."""
    with ServerProcess(tmp_path / "calm") as calm:
        expected, _ = run(
            tournament(calm.address, DETERMINISTIC, deals=3, move_ms=MOVE_MS), seconds=120
        )
    assert expected.finished == expected.planned == 9
    data = tmp_path / "killed"
    first = ServerProcess(data).start()
    address = first.address

    async def scenario() -> tpb.TournamentInfo:
        async with ArenaClient(address, retry_for=60) as client:
            created = await create(
                client,
                DETERMINISTIC,
                "crazy_sixes",
                players=3,
                deals=3,
                move_ms=MOVE_MS,  # far less than the outage and the reconnection after it
                concurrency=8,
                seed=bytes(range(32)),
            )
            tid = created.tournament.tournament_id
            playing = [
                asyncio.create_task(entrant)
                for entrant in entrants(client, created, DETERMINISTIC, fixed=True)
            ]

            async def under_way() -> bool:
                return (await client.tournaments.get(tid)).finished >= 2

            await eventually(under_way, within=60, what="two matches played")
            first.kill()
            await asyncio.sleep(OUTAGE_S)  # the bots retry meanwhile, as after a real crash
            second = ServerProcess(data, listen=address).start()
            try:
                await asyncio.wait_for(asyncio.gather(*playing), timeout=120)
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
    assert results(final) == results(expected), final.matches


async def stopped_tournament(address: str) -> tpb.TournamentInfo:
    """An SPRT of the rule bot against a random one (H1: the rule bot scores 5 points a match
    more), played by in-process entrants to its end, with its matches. Its deals and moves
    are fixed (a seed, fixed contributions, bots that choose the same in the same position),
    so it decides at the same group every run: with random moves, one run in twenty or so
    needed every planned group."""
    from cardarena.clients.bots.rules_bot import RuleBot
    from cardarena.clients.client import StopRule

    bots: dict[str, Callable[[], Bot]] = {
        "rules": RuleBot,
        "random-a": Scattered,
        "random-b": Scattered,
    }
    async with ArenaClient(address) as client:
        created = await create(
            client,
            bots,
            deals=60,
            move_ms=60_000,
            concurrency=6,
            stop=StopRule(a="rules", b="random-a", d0=0.0, d1=5.0),
            seed=bytes(range(32)),
        )
        await play_all(client, created, bots, fixed=True)
        return await client.tournaments.get(created.tournament.tournament_id, matches=True)


def test_the_stop_rule_ends_a_tournament_once_it_decides(server: ServerProcess) -> None:
    """An SPRT of the rule bot against a random one (H1: the rule bot scores 5 points a
    match more): the tournament stops long before its 60 planned groups, says which
    hypothesis it accepted, every match it started was played to its end, and every
    duplicate group it began was played whole."""
    final = run(stopped_tournament(server.address), seconds=180)
    assert final.status == tpb.TOURNAMENT_STATUS_ENDED
    assert final.end_reason.startswith("the stop rule accepted H1"), final.end_reason
    assert final.sprt.verdict == "H1" and final.sprt.llr >= final.sprt.upper
    assert final.finished < final.planned == 180 and final.failed == 0
    started = [m for m in final.matches if m.match_id]
    assert len(started) == final.finished  # none left running, none cut short
    assert all(m.status == spb.MATCH_STATUS_ENDED and m.last_hash for m in started)
    # The groups in flight when it decided were finished: every group counted is whole, so
    # no deal counts unbalanced in the standings and the crosstable.
    rotations = Counter(m.group for m in started)
    assert set(rotations.values()) == {3}, rotations


def test_a_stopped_tournament_reads_back_the_same_after_a_restart(tmp_path: Path) -> None:
    """The stop rule's verdict is frozen at the sample that reached it, and the groups
    finished after it are more samples: a restart that read the tournament back showed the
    test over all of them (another llr, another signed content, two valid "final"
    signatures). Read back, it is the same message, signed the same."""
    data = tmp_path / "data"

    async def played() -> tpb.TournamentInfo:
        with ServerProcess(data) as server:
            return await stopped_tournament(server.address)

    async def read_back(tid: str) -> tpb.TournamentInfo:
        with ServerProcess(data) as server:
            async with ArenaClient(server.address) as client:
                return await client.tournaments.get(tid, matches=True)

    before = run(played(), seconds=180)
    assert before.sprt.verdict == "H1" and before.finished < before.planned
    after = run(read_back(before.tournament_id), seconds=60)
    assert after.sprt == before.sprt
    assert after == before


def test_a_duplicate_groups_seed_stays_secret_until_its_last_rotation_ends(
    server: ServerProcess,
) -> None:
    """One rotation at a time: when the first has ended and the second is being played,
    nothing the server returns about the first (ListMatches, the tournament) shows the seed
    that deals the second its cards, and GetMatch, GetMatchLog and its spectator stream
    refuse a stranger, naming its duplicate group; once the group is done, every rotation
    shows the one seed, and its log audits clean."""
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
    bots: dict[str, Callable[[], Bot]] = {
        "a": HeldInTheSecondMatch,
        "b": FirstLegal,
        "c": FirstLegal,
    }

    async def scenario() -> None:
        async with ArenaClient(server.address) as client:
            created = await create(
                client, bots, deals=1, move_ms=60_000, concurrency=1, creator_secret=CREATOR
            )
            tid = created.tournament.tournament_id

            async def two_started() -> list[str]:
                info = await client.tournaments.get(tid, matches=True)
                ids = [m.match_id for m in info.matches if m.match_id]
                return ids if len(ids) >= 2 else []

            playing = [asyncio.create_task(entrant) for entrant in entrants(client, created, bots)]
            first, second = (await eventually(two_started, within=60, what="two rotations"))[:2]
            second_match[0] = second
            try:
                for read in (client.get_match, client.match_log):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await read(first)
                    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
                    assert "duplicate group" in (refused.value.details() or "")
                ours: list[spb.MatchInfo] = []
                token = ""
                while True:  # every page: the module's server has hosted other tournaments
                    listed = await client.stub.ListMatches(
                        spb.ListMatchesRequest(page_size=1000, page_token=token), timeout=10
                    )
                    ours += [m for m in listed.matches if m.tournament_id == tid]
                    token = listed.next_page_token
                    if not token:
                        break
                assert ours and all(m.seed == b"" for m in ours)
                (listed_first,) = [m for m in ours if m.match_id == first]
                assert listed_first.status == spb.MATCH_STATUS_ENDED
                with pytest.raises(grpc.aio.AioRpcError) as unwatched:
                    async for _ in client.stub.WatchMatch(spb.WatchMatchRequest(match_id=first)):
                        pass
                assert unwatched.value.code() == grpc.StatusCode.FAILED_PRECONDITION
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
