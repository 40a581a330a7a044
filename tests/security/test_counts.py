"""Costs that do not grow with the number of matches (issue 10, defect 11).

Before the fix every status change recounted every hosted match (creates fell from 597/s to
34/s at 20,000 matches), and the first ListMatches after a restart replayed the log of every
listed match (645 ms for 200). Both are checked without timing: the arena's match table is
instrumented, and the engine's rebuild is counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.audit import audit_log
from cardarena.server import metrics
from cardarena.server.app import Server
from cardarena.server.hosting import Arena, HostedMatch, rebuild
from cardarena.server.hosting import arena as arena_module
from cardarena.server.hosting import following as hosting_module
from cardarena.v1 import service_pb2 as spb

from ..arenas import act, seat_everyone
from ..calls import RPC_TIMEOUT as RPC
from ..calls import run
from ..waiting import eventually
from .support import address_of, channel_to, create_table, play_hosted_to_end, served

ENDED = 200
CANCELLED = 30
SHORT = {"rounds": ["pass"]}
"""A one-round Pentathlon: about fifty actions."""


def count_rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that grows, from now on, by the id of every match whose engine is rebuilt from
    its log (by either module of the hosting layer that rebuilds one)."""
    rebuilt: list[str] = []

    def counting(real: Any) -> Any:
        def counted(record: Any, log: Any) -> Any:
            rebuilt.append(record.match_id)
            return real(record, log)

        return counted

    monkeypatch.setattr(arena_module, "rebuild", counting(rebuild.rebuild))
    monkeypatch.setattr(hosting_module, "rebuild_engine", counting(rebuild.rebuild_engine))
    return rebuilt


async def ended_match(arena: Arena) -> str:
    """A short match played to its end through the arena (fast: no RPC per action)."""
    hosted = await arena.create("pentathlon", 3, SHORT)
    await seat_everyone(hosted)
    while not hosted.ended:
        await act(hosted)
    return hosted.match_id


class Watched(dict[str, HostedMatch]):
    """The arena's match table, counting every walk over it (every way a dict is walked:
    iterating it, or its keys, values or items)."""

    walks = 0


def _counted(walk: str) -> Callable[..., Any]:
    """``dict``'s ``walk`` method, counting each call in ``Watched.walks``."""
    real = getattr(dict, walk)

    def counted(self: Watched) -> Any:
        Watched.walks += 1
        return real(self)

    return counted


for _walk in ("__iter__", "keys", "values", "items"):
    setattr(Watched, _walk, _counted(_walk))


def test_listing_ended_matches_after_a_restart_replays_no_log(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server:
            for _ in range(ENDED // 20):
                await asyncio.gather(*(ended_match(server.arena) for _ in range(20)))
            async with channel_to(address_of(server)) as (_, api):
                await create_table(api, seat_all=False)  # one waiting, one running
                await create_table(api)

        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            hosted_before = set(server.arena.matches)
            rebuilt = count_rebuilds(monkeypatch)
            ended = await api.ListMatches(
                spb.ListMatchesRequest(status=spb.MATCH_STATUS_ENDED, page_size=ENDED),
                timeout=RPC,
            )
            everything = await api.ListMatches(spb.ListMatchesRequest(page_size=1000), timeout=RPC)
            assert not rebuilt, f"listing replayed {len(rebuilt)} logs"
            assert set(server.arena.matches) == hosted_before, "listing loaded ended matches"
            assert len(ended.matches) == ENDED
            assert all(m.status == spb.MATCH_STATUS_ENDED for m in ended.matches)
            assert len(everything.matches) == ENDED + 2

            # What the listing says from the records is what the match says, and it audits
            # against the match's log like the server's own MatchInfo.
            for listed in ended.matches[:: ENDED // 10]:
                got = await api.GetMatch(spb.GetMatchRequest(match_id=listed.match_id))
                assert listed == got.match
                log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=listed.match_id))
                report = audit_log(
                    spb.GetMatchLogResponse(match=listed, entries=log.entries, seed=log.seed)
                )
                assert report.ok, report.failure

    run(scenario(), 60)


def test_listing_cancelled_matches_after_a_restart_replays_no_log(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled matches are ended matches too, and on an open server the commonest: every
    match nobody joins expires as one."""

    async def scenario() -> None:
        async with served(data_dir) as server:
            for _ in range(CANCELLED):
                hosted = await server.arena.create("pentathlon", 3, SHORT)
                await hosted.cancel("expired: seats still free after 3600 s")
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            rebuilt = count_rebuilds(monkeypatch)
            listed = await api.ListMatches(
                spb.ListMatchesRequest(status=spb.MATCH_STATUS_ENDED), timeout=RPC
            )
            assert len(listed.matches) == CANCELLED
            assert all(m.cancelled for m in listed.matches)
            assert not rebuilt, f"listing replayed {len(rebuilt)} logs"

    run(scenario(), 60)


def test_status_changes_never_walk_every_hosted_match(data_dir: Path) -> None:
    """Creating, starting and ending matches with many hosted: the match gauge follows
    every change, and nothing walks the table of hosted matches to count it."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            await asyncio.gather(*(ended_match(server.arena) for _ in range(10)))
            for _ in range(5):
                await create_table(api, seat_all=False)
            server.arena.matches = Watched(server.arena.matches)
            Watched.walks = 0
            for _ in range(3):
                table = await create_table(api)  # waiting, then running
                await play_hosted_to_end(server, api, table)  # ended
            await create_table(api, seat_all=False)
            assert Watched.walks == 0, f"{Watched.walks} walks over the hosted matches"
            assert gauges() == truth(server) == {"waiting": 6, "running": 0, "ended": 13}

    run(scenario(), 60)


def gauges() -> dict[str, int]:
    return {
        state: int(metrics.REGISTRY.get_sample_value("cardarena_matches", {"state": state}) or 0)
        for state in ("waiting", "running", "ended")
    }


def truth(server: Server) -> dict[str, int]:
    counts = dict.fromkeys(("waiting", "running", "ended"), 0)
    for hosted in dict.values(server.arena.matches):
        counts[hosted.status] += 1
    return counts


def test_a_listed_match_shows_the_faults_its_log_holds(data_dir: Path) -> None:
    """An ended match the clock played (every move a time-out, each a fault), listed after a
    restart from its record and log: the listing says what GetMatch says, faults included."""

    async def scenario() -> None:
        async with served(data_dir) as server:
            hosted = await server.arena.create("pentathlon", 3, SHORT, move_ms=5)
            for _ in range(3):
                await hosted.join(None, "absent")
            await eventually(lambda: hosted.ended, within=30, what="the clock to end it")
            match_id = hosted.match_id

        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            listed = await api.ListMatches(
                spb.ListMatchesRequest(status=spb.MATCH_STATUS_ENDED), timeout=RPC
            )
            (mine,) = [m for m in listed.matches if m.match_id == match_id]
            assert match_id not in server.arena.matches  # listed without hosting it
            got = await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=RPC)
            assert mine == got.match
            assert sum(s.faults for s in mine.seats) > 0

    run(scenario(), 60)
