"""Issue 30's bank clock through the whole server: a tournament on a 3 s + 0.1 s bank, where one
entrant spends its whole bank on one decision of each match. It loses those matches on time
(its bank gone, every later turn times out at once and the fault policy forfeits it), the
others are never charged, and the auditor agrees with every time-out in every log."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

import pytest

from cardarena.clients.audit.tournament import audit_fetched
from cardarena.clients.bots import Bot, SeatState
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.clients.logs.bundle import fetch_logs
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess
from .hosted import entrants

pytestmark = pytest.mark.integration

BANK_MS, INCREMENT_MS = 3000, 100


class Spender:
    """Thinks 3.3 s over its first decision of a match (more than its whole bank), then plays
    at random at once."""

    name = "spender"

    def __init__(self) -> None:
        self.thought = False

    def choose(self, state: SeatState) -> int:
        if not self.thought:
            self.thought = True
            time.sleep(BANK_MS / 1000 + 0.3)
        return random.choice(state.legal)


async def played(address: str) -> tuple[tpb.TournamentInfo, list[str], list[pb.Event]]:
    bots: dict[str, Callable[[], Bot]] = {"a": RandomBot, "spender": Spender, "b": RandomBot}
    async with ArenaClient(address) as client:
        request = tpb.CreateTournamentRequest(
            game="triathlon",
            players=3,
            time_control=spb.TimeControl(bank_ms=BANK_MS, increment_ms=INCREMENT_MS),
            entrants=[tpb.EntrantSpec(name=name) for name in bots],
            deals=1,
            concurrency=3,
        )
        created = await client.tournaments.stub.CreateTournament(request, timeout=10)
        await asyncio.gather(*entrants(client, created, bots))
        final = await client.tournaments.get(created.tournament.tournament_id, matches=True)
        logs = await fetch_logs(client, [m.match_id for m in final.matches])
    events = [
        pb.Event.FromString(e.event)
        for log in logs.values()
        if isinstance(log, spb.GetMatchLogResponse)
        for e in log.entries
    ]
    return final, audit_fetched(final, logs).findings, events


def test_a_bot_that_spends_its_bank_loses_on_time_and_nobody_else_is_charged(
    server: ServerProcess,
) -> None:
    final, findings, events = run(played(server.address), seconds=180)
    assert findings == []
    assert final.time_control == spb.TimeControl(bank_ms=BANK_MS, increment_ms=INCREMENT_MS)
    rows = {s.entrant: s for s in final.standings}
    assert rows["spender"].forfeits == rows["spender"].matches == 3
    assert rows["spender"].timeouts == rows["spender"].faults == 9  # 3 a match, then forfeit
    for other in ("a", "b"):
        assert rows[other].faults == rows[other].timeouts == rows[other].forfeits == 0
    spent = [e for e in events if e.WhichOneof("kind") == "timed_out" and e.HasField("think_ms")]
    assert spent and spent[0].think_ms == BANK_MS  # each match's first: the whole bank
    charged = [e.think_ms for e in events if e.HasField("think_ms")]
    assert all(0 <= ms <= BANK_MS + 60 * INCREMENT_MS for ms in charged)
