"""Play answers every action, the one that ends the match included (issue 10, defect 9).

Before the fix the stream ended with the match, before the result of the action that ended it
was sent (10 of 10 matches): a bot could not tell whether its last move had been applied.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..calls import run
from .support import address_of, channel_to, create_table, play_seat, served

MATCHES = 3


def test_play_sends_the_result_of_the_match_ending_action_before_it_ends(data_dir: Path) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            for _ in range(MATCHES):
                table = await create_table(api)
                seats = await asyncio.gather(
                    *(play_seat(address_of(server), table, s) for s in range(table.players))
                )
                hosted = server.arena.matches[table.match_id]
                assert hosted.ended
                last_results = []
                for sent, results in seats:
                    assert [r.request_id for r in results] == sent, "an action went unanswered"
                    assert all(r.code == 0 for r in results), [r for r in results if r.code]
                    if results:
                        last_results.append(results[-1].last_seq)
                # The seat that ended the match got the result of that action: the events it
                # wrote run to the end of the log (the seed's reveal).
                assert max(last_results) == hosted.last_seq

    run(scenario(), 60)
