"""A duplicate group's seed is revealed at the replica that writes each match, and counts as
revealed only once the log holds it. A director that took over after its replica died once
asked the followed copy of an ended match (still leased to the dead replica) to reveal, which
wrote nothing, and counted it revealed: the match's seed was never revealed and its log never
became fetchable (an audit of the tournament failed)."""

from __future__ import annotations

from cardarena.server.hosting import Arena
from cardarena.server.tournaments.reveals import reveal_at_writer
from tests.arenas import LAPSED, act, seat_everyone, with_two_arenas


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
