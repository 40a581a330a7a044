"""A duplicate group's seed is revealed at the replica that writes each match, and counts as
revealed only once the log holds it. A director that took over after its replica died once
asked the followed copy of an ended match (still leased to the dead replica) to reveal, which
wrote nothing, and counted it revealed: the match's seed was never revealed and its log never
became fetchable (an audit of the tournament failed)."""

from __future__ import annotations

import structlog

from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.tournaments.reveals import Reveals, reveal_at_writer
from tests.arenas import LAPSED, A, act, seat_everyone, with_two_arenas


def test_a_follower_reveals_nothing_until_the_dead_owners_lease_lapses() -> None:
    async def body(a: Arena, b: Arena) -> None:
        hosted = await a.create("triathlon", 3, {}, tournament_id="t", seed_shared=True)
        await seat_everyone(hosted)
        while not hosted.ended:
            await act(hosted)
        assert not hosted.revealed  # a shared seed waits for its group
        assert await reveal_at_writer(b, hosted.match_id) is None  # a's lease is live
        assert not (await b.get(hosted.match_id)).revealed
        await a.store.renew_leases(LAPSED)  # a died: its lease runs out
        last_hash = await reveal_at_writer(b, hosted.match_id)
        followed = await b.get(hosted.match_id)
        assert last_hash is not None and followed.revealed and followed.owned
        stored = await b.store.read_events(hosted.match_id)
        assert stored[-1].hash == last_hash
        assert stored[-1].seq == hosted.last_seq + 1  # the reveal, written by b
        assert await reveal_at_writer(b, hosted.match_id) == last_hash  # once only

    with_two_arenas(body)


def test_a_replica_that_does_not_direct_reveals_what_it_writes_and_nothing_else() -> None:
    """A following director reveals the complete groups' matches its replica writes (a
    failover can leave one there, out of the director's reach) and writes nothing to those
    it only follows."""

    async def body(a: Arena, b: Arena) -> None:
        mine, theirs = [
            await a.create("triathlon", 3, {}, tournament_id="t", seed_shared=True)
            for _ in range(2)
        ]
        for hosted in (mine, theirs):
            await seat_everyone(hosted)
            while not hosted.ended:
                await act(hosted)
        await a.store.renew_leases(LAPSED)  # a died; b takes one of its matches over
        assert isinstance(await b.writer_of(mine.match_id), HostedMatch)
        await a.store.renew_leases(A)  # ... and a is back for the other
        assert not (await b.get(theirs.match_id)).owned  # b follows it
        held = Reveals(b, structlog.get_logger())
        await held.reveal_held({0: mine.match_id, 1: theirs.match_id}, [0, 1])
        assert held.done == {0}
        assert (await b.get(mine.match_id)).revealed
        assert not (await b.get(theirs.match_id)).revealed
        seqs = [e.seq for e in await b.store.read_events(theirs.match_id)]
        assert seqs[-1] == theirs.last_seq  # nothing written to the one it follows

    with_two_arenas(body)
