"""An ended tournament is read back from the store on demand (after a restart, or once it has
left the bounded set kept in memory). Calls that arrive while it is being read must wait for
the whole of it: a half-read one would be answered as ENDED with none of its results, and
signed as final.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from .support import served
from .tournaments import apis, host, settled

CALLS = 8


def test_concurrent_reads_of_a_reloaded_tournament_all_see_it_whole(data_dir: Path) -> None:
    async def before_restart() -> tpb.TournamentInfo:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            hosted = await host(tapi, deals=2, concurrency=3)
            await settled(server, hosted.tournament_id)
            cancelled = await tapi.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id, reason="r"),
                metadata=auth(hosted.creator),
                timeout=RPC,
            )
            assert cancelled.tournament.status == tpb.TOURNAMENT_STATUS_ENDED
            whole = tpb.GetTournamentRequest(
                tournament_id=hosted.tournament_id, include_matches=True
            )
            return (await tapi.GetTournament(whole, timeout=RPC)).tournament

    async def after_restart(tournament_id: str) -> list[tpb.TournamentInfo]:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            assert tournament_id not in server.tournaments.directors  # read on demand
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            answers = await asyncio.gather(
                *(tapi.GetTournament(whole, timeout=RPC) for _ in range(CALLS))
            )
            return [answer.tournament for answer in answers]

    ended = run(before_restart(), 60)
    assert ended.started > 0 and ended.HasField("results_signature")
    for info in run(after_restart(ended.tournament_id), 60):
        assert info == ended
