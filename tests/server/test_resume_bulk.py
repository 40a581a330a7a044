"""A restart's bulk resume (one read of every unfinished log) hosts each match exactly as it
was before the restart, and as loading it alone from its log does: the same engine, seats,
joins, faults, rounds, chain and requests answered."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.store import SqliteStore


def state(hosted: HostedMatch) -> dict[str, Any]:
    """What a hosted match is, as far as its log decides it."""
    engine = hosted.engine
    return {
        "log": list(engine.log),
        "to_act": engine.to_act,
        "legal": engine.legal_actions() if hosted.running else None,
        "totals": list(engine.totals),
        "seq": (hosted.last_seq, hosted.last_hash),
        "seats": [(s.token_hash, s.name, s.reserved) for s in hosted.seats],
        "joins": (list(hosted.joins.joined), list(hosted.joins.contributions)),
        "faults": (list(hosted.faults.counts), list(hosted.faults.forfeited)),
        "rounds": list(hosted.readers.rounds),
        "status": (hosted.status, hosted.cancelled, hosted.revealed),
        "requests": hosted.requests.written(),
    }


async def play(hosted: HostedMatch, actions: int) -> None:
    for _ in range(actions):
        seat = hosted.engine.to_act
        if seat is None or not hosted.running:
            return
        action = hosted.engine.legal_actions()[-1]
        await hosted.submit(seat, action, hosted.last_seq, f"r{hosted.last_seq}")


def test_the_bulk_resume_hosts_each_match_as_it_was_and_as_loading_it_alone_does(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        path = tmp_path / "store.db"
        async with SqliteStore(path) as store:
            arena = Arena(store)
            before: dict[str, dict[str, Any]] = {}
            # Two configurations of one game (the rebuild validates each once), another game.
            for game, players, options, joined, actions in (
                ("hexathlon", 4, None, 4, 7),
                ("hexathlon", 4, None, 4, 0),
                ("hexathlon", 4, None, 2, 0),  # waiting: two seats free
                ("hexathlon", 4, {"first_dealer": 2}, 4, 5),
                ("triathlon", 3, None, 3, 9),
                ("triathlon", 3, None, 0, 0),  # nobody joined yet
            ):
                hosted = await arena.create(game, players, options)
                for seat in range(joined):
                    await hosted.join(seat, f"p{seat}", contribution=bytes([seat]) * 32)
                await play(hosted, actions)
                before[hosted.match_id] = state(hosted)
            ended = await arena.create("triathlon", 3, None)
            await ended.cancel("not resumed")
            await arena.shutdown()
        async with SqliteStore(path) as store:
            bulk = Arena(store)
            assert await bulk.resume_unfinished() == len(before)
            assert sorted(bulk.matches) == sorted(before)
            alone = Arena(store)
            for match_id, was in before.items():
                resumed = bulk.matches[match_id]
                assert state(resumed) == was
                assert state(await alone.get(match_id)) == was
            assert ended.match_id not in bulk.matches
            await bulk.shutdown()
            await alone.shutdown()

    asyncio.run(asyncio.wait_for(scenario(), 60))
