"""Start-up is not a move, in a hosted tournament played as ``cardarena bot connect`` plays it
(docs/bot-protocol.md): the server's clock runs on a match from the moment the entrant hears
of it, so the entrant starts its programs before it enters, and each match takes one that has
loaded. A program with a second of start-up under a 500 ms move clock loses no move; one
never ready is reported, and its matches end.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cardarena.clients.bots.decider import Decider, PythonDecider
from cardarena.clients.bots.external import ExternalDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament.entrant import EntrantReport, play_entrant
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..clients.test_external_startup import SLOW_START
from ..serverproc import ServerProcess
from .hosted import FirstLegal, create
from .test_external_late_answers import seat_turns

pytestmark = pytest.mark.integration

MOVE_MS = 500


def hosted(
    address: str,
    program: list[str],
    *,
    startup_s: float,
    forfeit_after: int | None = None,
) -> tuple[tpb.TournamentInfo, EntrantReport, list[str], list[tuple[int, int]]]:
    """A tournament of three entrants (the program, a first-legal bot and a random one), one
    deal of a one-round Pentathlon, every match at once: how it ended, the program entrant's
    report and what it said, and per match (its seat's actions, how many were defaults)."""

    def make(_assigned: tpb.MatchAssigned) -> Decider:
        return ExternalDecider(program)

    said: list[str] = []

    async def scenario() -> tuple[tpb.TournamentInfo, EntrantReport, list[tuple[int, int]]]:
        async with ArenaClient(address) as client:
            created = await create(
                client,
                ["slow", "first", "random"],
                "pentathlon",
                players=3,
                deals=1,
                move_ms=MOVE_MS,
                options={"rounds": ["queens"]},
                forfeit_after=forfeit_after,
                concurrency=8,
                seed=bytes(range(32)),
            )
            tid = created.tournament.tournament_id
            slow, first, rand = created.entrant_keys
            report, _, _ = await asyncio.gather(
                play_entrant(client, tid, slow, make, log=said.append, startup_s=startup_s),
                play_entrant(client, tid, first, lambda _a: PythonDecider(FirstLegal)),
                play_entrant(client, tid, rand, lambda _a: PythonDecider(RandomBot)),
            )
            final = await client.tournaments.get(tid, matches=True)
            turns = []
            for line in final.matches:
                resp = await client.match_log(line.match_id)
                (seat,) = (s.seat for s in resp.match.seats if s.name == "slow")
                turns.append(seat_turns(resp, seat))
            return final, report, turns

    final, report, turns = run(scenario(), seconds=120)
    assert final.status == tpb.TOURNAMENT_STATUS_ENDED
    assert final.finished == final.planned == len(turns) == 3
    return final, report, said, turns


@pytest.mark.parametrize("hello", [True, False], ids=["protocol 3", "protocol 2"])
def test_a_program_slow_to_start_loses_no_move_in_a_hosted_tournament(
    server: ServerProcess, tmp_path: Path, hello: bool
) -> None:
    """A second of start-up before it reads a line, 500 ms a move, every match begun at once:
    the programs were started before the entrant entered, so not one move of theirs is the
    server's default. A program of protocol 2 (no ``hello``) is waited for the whole start-up
    allowance (3 s here) before the entrant enters; one of protocol 3 only until it says
    hello."""
    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_START)
    program = [sys.executable, str(script), "1.0", "hello" if hello else "no"]
    final, report, said, turns = hosted(server.address, program, startup_s=3.0)
    assert all(actions > 5 and defaults == 0 for actions, defaults in turns), turns
    assert report.matches == 3 and report.failures == 0 and report.notes == [], report
    rows = {s.entrant: s for s in final.standings}
    assert rows["slow"].faults == rows["slow"].forfeits == 0
    if hello:
        assert said == []
    else:
        assert len(said) == 1 and 'did not say {"hello": true} within 3 s' in said[0], said


def test_a_program_never_ready_is_reported_and_its_matches_end(
    server: ServerProcess, tmp_path: Path
) -> None:
    """A program still starting when the allowance (1 s here) is up: the entrant says so
    before it enters, each match notes why its seat did not play, and the seat forfeits."""
    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_START)
    program = [sys.executable, str(script), "3600", "hello"]
    final, report, said, turns = hosted(server.address, program, startup_s=1.0, forfeit_after=3)
    assert all(actions == defaults > 0 for actions, defaults in turns), turns
    assert any('3 programs started ahead did not say {"hello": true}' in s for s in said), said
    why = 'the bot did not start: not ready within 1 s of start (no {"ready": true}: the'
    assert any(why in note for note in report.notes), report.notes
    assert report.failures >= 3
    assert {s.entrant: s.forfeits for s in final.standings}["slow"] == 3
