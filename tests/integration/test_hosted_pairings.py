"""A hosted tournament on each pairing design beside every lineup: the server plans it from the
design, the entrants play it, its info names the design, and the auditor recomputes every
lineup from the revealed seed (and refuses a results file whose design was changed)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import pytest

from cardarena.clients.audit.tournament import audit_fetched
from cardarena.clients.bots import Bot
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.clients.logs.bundle import fetch_logs
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run
from ..serverproc import ServerProcess
from .hosted import entrants

pytestmark = pytest.mark.integration


async def hosted(
    address: str, pairings: tpb.Pairings, names: str, *, deals: int
) -> tuple[tpb.TournamentInfo, list[str], list[str]]:
    """Play a Crazy Sixes tournament of random bots called ``names`` on ``pairings``; its
    final info, the audit's findings, and those of the info with its design changed."""
    bots: dict[str, Callable[[], Bot]] = dict.fromkeys(names, RandomBot)
    async with ArenaClient(address) as client:
        request = tpb.CreateTournamentRequest(
            game="crazy_sixes",
            players=3,
            time_control=spb.TimeControl(move_ms=5000),
            entrants=[tpb.EntrantSpec(name=name) for name in names],
            deals=deals,
            concurrency=8,
            pairings=pairings,
        )
        created = await client.tournaments.stub.CreateTournament(request, timeout=10)
        await asyncio.gather(*entrants(client, created, bots))
        final = await client.tournaments.get(created.tournament.tournament_id, matches=True)
        logs = await fetch_logs(client, [m.match_id for m in final.matches])
    forged = tpb.TournamentInfo()
    forged.CopyFrom(final)
    forged.pairings.kind = tpb.PAIRING_KIND_EVERY_LINEUP
    forged.pairings.candidates = 0
    return final, audit_fetched(final, logs).findings, audit_fetched(forged, logs).findings


def test_a_balanced_tournament_is_planned_played_and_audited(server: ServerProcess) -> None:
    """Five entrants at three seats, two rounds: five groups a round (not C(5, 3) = 10), each
    entrant in three of them, every seat equally."""
    pairings = tpb.Pairings(kind=tpb.PAIRING_KIND_BALANCED)
    final, findings, forged = run(hosted(server.address, pairings, "abcde", deals=2), 240)
    assert final.pairings == pairings
    assert final.planned == final.finished == 2 * 5 * 3 and final.failed == 0
    assert findings == []
    assert forged and "planned" in forged[0]
    per_entrant = Counter(name for m in final.matches for name in m.entrants)
    assert set(per_entrant.values()) == {2 * 3 * 3}
    assert {s.entrant: s.groups for s in final.standings} == dict.fromkeys("abcde", 6)


def test_a_gauntlet_is_planned_played_and_audited(server: ServerProcess) -> None:
    """Two candidates against a field of three at three seats: two field lineups a deal, each
    played by both candidates in every rotation on one seed."""
    pairings = tpb.Pairings(kind=tpb.PAIRING_KIND_GAUNTLET, candidates=2)
    final, findings, forged = run(hosted(server.address, pairings, "xyfgh", deals=1), 240)
    assert final.pairings == pairings
    assert final.planned == final.finished == 2 * 2 * 3
    assert findings == []
    assert forged
    for group in (0, 1):
        lines = [m for m in final.matches if m.group == group]
        assert len(lines) == 6
        assert Counter(n for m in lines for n in m.entrants if n in "xy") == {"x": 3, "y": 3}
    # The candidates meet on the same cards: the crosstable compares them head to head.
    (pair,) = [p for p in final.crosstable if {p.a, p.b} == {"x", "y"}]
    assert pair.groups == 2
