"""A program whose every answer comes late, in a hosted tournament, as ``cardarena bot
connect`` plays it (issue 27: a late answer was read as the answer to the next turn, refused
as "'exclude:S' is not one of the legal actions", and the seat forfeited).

Each late answer is dropped (``ExternalDecider.late``), none is sent for a later turn, so every
turn of the program's seat is the server's time-out default, and the matches run to their end.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from cardarena.clients.audit import audit_log
from cardarena.clients.bots.decider import Decider, PythonDecider
from cardarena.clients.bots.external import ExternalDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament.entrant import EntrantReport, play_entrant
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..clients.test_external_prompt_ids import ONE_BEHIND
from ..serverproc import ServerProcess
from .hosted import FirstLegal, create

pytestmark = pytest.mark.integration

ACTIONS = frozenset({"card_played", "passed", "suit_excluded", "trump_chosen"})


def seat_turns(resp: spb.GetMatchLogResponse, seat: int) -> tuple[int, int]:
    """How many actions ``seat`` made in the log, and how many were its time-out defaults."""
    actions = defaults = 0
    timed_out = False
    for entry in resp.entries:
        event = pb.Event.FromString(entry.event)
        kind = str(event.WhichOneof("kind"))
        if kind == "timed_out" and event.timed_out.seat == seat:
            timed_out = True
        elif kind in ACTIONS and getattr(event, kind).seat == seat:
            actions += 1
            defaults += timed_out
            timed_out = False
    return actions, defaults


def test_a_program_answering_every_turn_late_is_never_applied_to_a_later_turn(
    server: ServerProcess, tmp_path: Path
) -> None:
    script = tmp_path / "late.py"
    script.write_text(ONE_BEHIND)
    programs: list[ExternalDecider] = []

    def late(assigned: tpb.MatchAssigned) -> Decider:
        program = ExternalDecider([sys.executable, str(script), "ids"])
        if assigned.match_id:  # not the one made before entering, to learn what to start ahead
            programs.append(program)
        return program

    async def scenario() -> tuple[tpb.TournamentInfo, list[EntrantReport], list[tuple[int, int]]]:
        async with ArenaClient(server.address) as client:
            created = await create(
                client,
                ["late", "first", "random"],
                "pentathlon",
                players=3,
                deals=1,
                move_ms=300,
                options={"rounds": ["queens"]},
                forfeit_after=None,  # faults are counted, never forfeit: every turn is asked
                concurrency=8,
                seed=bytes(range(32)),
            )
            tid = created.tournament.tournament_id
            makers = [
                late,
                lambda _a: PythonDecider(FirstLegal),
                lambda _a: PythonDecider(RandomBot),
            ]
            reports = await asyncio.gather(
                *(
                    play_entrant(client, tid, key, make)
                    for key, make in zip(created.entrant_keys, makers, strict=True)
                )
            )
            final = await client.tournaments.get(tid, matches=True)
            turns = []
            for line in final.matches:
                resp = await client.match_log(line.match_id)
                assert audit_log(resp).ok
                (seat,) = (s.seat for s in resp.match.seats if s.name == "late")
                turns.append(seat_turns(resp, seat))
            return final, list(reports), turns

    final, reports, turns = run(scenario(), seconds=120)
    assert final.status == tpb.TOURNAMENT_STATUS_ENDED
    assert final.finished == final.planned == len(turns) > 0
    # Every turn of the late program was the server's default: no late answer was sent.
    assert all(actions == defaults > 5 for actions, defaults in turns), turns
    report = reports[0]
    assert report.matches == final.finished
    assert report.notes and all(n.endswith("no answer in time") for n in report.notes), report
    asked = sum(actions for actions, _ in turns)
    late_answers = sum(p.late for p in programs)
    # Turn k's answer is written when turn k + 1 comes: all but the last of each match's are
    # read (while a later turn is asked), and dropped.
    assert asked - 2 * len(programs) <= late_answers <= asked - len(programs), (asked, programs)
    rows = {s.entrant: s for s in final.standings}
    assert rows["late"].forfeits == 0 and rows["late"].faults == asked
    # Each match's late answers are in the entrant's report, as bot connect ends with them.
    assert report.late == late_answers
    assert len(report.late_notes) == min(10, late_answers)
    assert all(
        re.fullmatch(r"match \w+ seat \d: late at seq \d+: an answer to turn \d+ came .*", note)
        for note in report.late_notes
    ), report.late_notes
    assert report.summary()[0].endswith(f", {late_answers} late answers dropped")
