"""A tournament entrant that connects and drops its stream again and again must not grow its
matches' logs (nor every reader's queue) once per drop: like a refused action, a disconnect is
logged at most once per seat and turn. ``SeatFaults.note`` once marked only refused actions as
logged this turn, so under the fallback policy (``forfeit_after`` 0: never forfeits) every drop
was one more durable write, one more event for every spectator (a reader 1,024 behind is
dropped) and one more ``YourTurn`` for the seat to act, without end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cardarena.v1 import game_pb2 as pb

from ..arenas import seated_on_sqlite

DROPS = 40


def test_a_seat_dropping_its_stream_again_and_again_is_faulted_once_per_turn(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with seated_on_sqlite(tmp_path / "store.db", tournament_id="t1") as (store, hosted):
            spectator = hosted.readers.subscribe(None)
            seat = hosted.engine.to_act
            assert seat is not None and hosted.running
            before = hosted.last_seq
            for _ in range(DROPS):  # the entrant's stream ends, it comes back, it ends ...
                await hosted.disconnected(seat)
            logged = [
                pb.Event.FromString(item.payload)
                for item in await store.read_events(hosted.match_id, after_seq=before)
            ]
            faults = [e for e in logged if e.WhichOneof("kind") == "seat_faulted"]
            assert len(faults) <= 1, f"{len(faults)} faults logged for one turn of one seat"
            assert spectator.queue.qsize() <= 2
            assert not hosted.faults.forfeited[seat]  # the fallback policy: counted only

    asyncio.run(asyncio.wait_for(main(), 30))
