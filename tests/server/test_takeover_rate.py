"""A replica that finds more orphaned matches than one lease round takes (their owner died)
claims the rest in rounds that follow at once, not one lease period apart: with a 60 s lease a
round comes every 20 s, so 120 orphans waited 40 s for their new owner, every one of their
players stalled, where they now wait well under a second."""

from __future__ import annotations

from cardarena.server.hosting import Arena
from cardarena.server.hosting.replication import CLAIMS_PER_ROUND
from tests.arenas import LAPSED, with_two_arenas
from tests.waiting import eventually

ORPHANS = 2 * CLAIMS_PER_ROUND + 20


def test_a_replica_takes_every_orphan_over_without_a_period_per_round() -> None:
    async def body(a: Arena, b: Arena) -> None:
        ids = [(await a.create("triathlon", 3, {})).match_id for _ in range(ORPHANS)]
        await a.store.renew_leases(LAPSED)  # a died: every lease of its runs out
        assert len(await b.store.orphaned_matches(limit=ORPHANS + 1)) == ORPHANS
        claimed = await b.resume_unfinished()  # the first round, and the keeper
        assert claimed == CLAIMS_PER_ROUND

        def all_taken() -> bool:
            return all(m in b.matches and b.matches[m].owned for m in ids)

        await eventually(all_taken, within=5, what="every orphan taken over")
        assert await b.store.orphaned_matches() == []
        await b.shutdown()

    with_two_arenas(body)
