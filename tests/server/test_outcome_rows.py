"""A page of ended matches costs rows, not logs: each ended match's outcome is kept as a row
the first time its final log is folded, and read from there ever after.

ListMatches of a hundred ended matches used to read a hundred logs to their ends (85 ms of the
event loop a page, for anyone who asks); a tournament resumed after a restart read every log
it had played. The row is kept only once the seed is revealed (nothing follows it then), so a
tournament's match whose group is still being played is folded again until it is final.
"""

from __future__ import annotations

import asyncio
from fractions import Fraction
from pathlib import Path
from typing import Any

from cardarena.competition import FaultKinds
from cardarena.server.api.info import Unsettled, listed_infos
from cardarena.server.api.kept import KeptBytes
from cardarena.server.hosting import Arena
from cardarena.server.hosting.outcome import Outcome, outcome_of_summary, summary_of
from cardarena.server.store import SqliteStore
from cardarena.v1 import service_pb2 as spb
from tests.arenas import act, seat_everyone


def test_a_summary_keeps_every_field_exactly() -> None:
    outcome = Outcome(
        match_id="m",
        totals=(Fraction(205, 2), 88, -3),
        winners=(0,),
        cancelled=False,
        faults=(0, 2, 1),
        forfeited=(False, True, False),
        last_hash=bytes(range(32)),
        revealed=True,
        last_seq=417,
        kinds=(FaultKinds(), FaultKinds(1, 1, 0), FaultKinds(0, 0, 1)),
    )
    assert outcome_of_summary("m", summary_of(outcome)) == outcome


def test_listing_ended_matches_reads_their_logs_once(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)
            for _ in range(3):
                hosted = await arena.create("crazy_sixes", 3, None)
                await seat_everyone(hosted)
                while not hosted.ended:
                    await act(hosted)
            await arena.shutdown()
        async with SqliteStore(tmp_path / "store.db") as store:
            arena = Arena(store)  # nothing hosted: every ended match is read from the store
            records, _ = await arena.list_records(
                status="ended", game=None, page_size=10, page_token=None
            )
            first = infos(await listed_infos(arena, records, KeptBytes(1 << 20)))
            kept = await store.kept_summaries("match", [r.match_id for r in records])
            assert len(kept) == 3
            reads: list[Any] = []
            real = store.read_events

            async def counted(*args: Any, **kwargs: Any) -> Any:
                reads.append(args)
                return await real(*args, **kwargs)

            store.read_events = counted  # type: ignore[method-assign]
            again = infos(await listed_infos(arena, records, KeptBytes(1 << 20)))  # none kept
            assert reads == [], "a listed ended match read its log again"
            assert again == first
            assert all(info.totals and info.last_hash for info in again)
            assert not arena.matches, "listing hosted nothing"

    asyncio.run(asyncio.wait_for(main(), 60))


def infos(page: list[bytes | Unsettled]) -> list[spb.MatchInfo]:
    """A page's matches (all final here: ended, their seeds revealed)."""
    assert all(isinstance(item, bytes) for item in page)
    listed = b"".join(item for item in page if isinstance(item, bytes))
    return list(spb.ListMatchesResponse.FromString(listed).matches)
