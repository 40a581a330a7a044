"""An entrant's capacity (issue 30.4): an entrant that says it plays N matches at once is never
seated in more, whatever the tournament's concurrency; a later Enter raises or lifts it; a
capacity beyond the server's limit is INVALID_ARGUMENT naming it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import grpc

from cardarena.v1 import tournament_pb2 as tpb

from ..calls import auth
from ..waiting import eventually
from .support import failure
from .tournaments import Entry, director_of, host, tournament_test

if TYPE_CHECKING:
    from cardarena.server.app import Server
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub


def entering(
    tapi: TournamentServiceAsyncStub, tournament_id: str, key: str, capacity: int = 0
) -> Entry:
    request = tpb.EnterRequest(tournament_id=tournament_id, capacity=capacity)
    return Entry(tapi.Enter(request, metadata=auth(key), timeout=60))


@tournament_test(seconds=60)
async def test_an_entrant_is_never_seated_in_more_matches_than_it_plays_at_once(
    server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
) -> None:
    """Three entrants, every match seats all three, concurrency 3: with entrant a at 1 the
    director runs one match at a time (nobody plays, so none ends); a's next Enter at 2 lets a
    second start, and no more."""
    hosted = await host(tapi, deals=3, concurrency=3, entry_ms=30_000)
    first = entering(tapi, hosted.tournament_id, hosted.keys[0], capacity=1)
    await first.read()
    others = [entering(tapi, hosted.tournament_id, key) for key in hosted.keys[1:]]
    director = director_of(server, hosted.tournament_id)
    await first.until_matches(1)
    await asyncio.sleep(0.3)  # room for a wrong second start to happen
    assert len(director.running) == 1 and director.next_index == 1
    again = entering(tapi, hosted.tournament_id, hosted.keys[0], capacity=2)
    await again.read()
    await eventually(lambda: len(director.running) == 2, what="a second match started")
    await asyncio.sleep(0.3)
    assert len(director.running) == 2 and director.next_index == 2
    for entry in (first, again, *others):
        entry.cancel()


@tournament_test()
async def test_a_capacity_beyond_the_limit_is_refused_by_name(
    server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
) -> None:
    hosted = await host(tapi)
    error = await failure(
        entering(tapi, hosted.tournament_id, hosted.keys[0], capacity=257).call.read()
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "capacity is at most 256" in (error.details() or "")
