"""Entrants' entropy in a hosted tournament (docs/rules.md §4.9), tried as a skeptic would.

The first match waits for every entrant (at most ``entry_ms``); what each contributed is
sealed in entrant order before any card is dealt and shown in ``TournamentInfo``; every
match is dealt from its group seed of the mixed tournament seed; an offer after the seal is
not mixed in; a bad contribution is refused; a tournament's match takes no contribution of
its own (its rotations must deal the same cards).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import grpc

from cardarena.competition import group_seed, mixed_seed
from cardarena.engine import commitment
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import served
from .tournaments import (
    apis,
    director_of,
    enter,
    host,
    stream_failure,
    tournament_test,
)

if TYPE_CHECKING:
    from cardarena.server.app import Server
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

GIVEN = (bytes(range(32)), b"\xff" * 32)
"""Entrants a and c contribute; b enters without contributing."""


@tournament_test(60)
async def test_the_seed_mixes_what_every_entrant_gave_before_the_first_match(
    server: Server, tapi: TournamentServiceAsyncStub, api: MatchServiceAsyncStub
) -> None:
    hosted = await host(tapi, entry_ms=60_000, seed=bytes(32))
    tid = hosted.tournament_id
    director = director_of(server, tid)
    first = enter(tapi, tid, hosted.keys[0], GIVEN[0])
    await first.read()
    second = enter(tapi, tid, hosted.keys[1])
    await second.read()
    # Two of three in, and the director has seen both: no match may start.
    await eventually(lambda: director.entry.counted == 2, what="the two offers counted")
    assert not director.match_ids and director.entry.sealed is None
    third = enter(tapi, tid, hosted.keys[2], GIVEN[1])
    await third.read()
    await eventually(lambda: bool(director.match_ids), what="the first match")
    late = enter(tapi, tid, hosted.keys[1], b"\x07" * 32)  # after the seal: not mixed
    await late.read()
    info = (await tapi.GetTournament(tpb.GetTournamentRequest(tournament_id=tid))).tournament
    assert info.entry_closed and info.entry_ms == 60_000
    assert list(info.contributions) == [GIVEN[0], b"", GIVEN[1]]
    assert info.seed_commitment == commitment(bytes(32)) and not info.seed
    mixed = mixed_seed(bytes(32), [GIVEN[0], None, GIVEN[1]])
    for plan in director.plans:
        assert plan.seed == group_seed(mixed, plan.group)
    match_id = director.match_ids[0]
    hosted_match = server.arena.matches[match_id]
    assert hosted_match.record.seed == group_seed(mixed, 0)
    # A tournament's match deals its group's cards: no seat adds entropy of its own.
    join = spb.JoinMatchRequest(match_id=match_id, contribution=bytes(32))
    try:
        await api.JoinMatch(join, timeout=RPC)
        raise AssertionError("a contribution to a tournament's match was taken")
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "group" in (error.details() or "")
    for entry in (first, second, third, late):
        entry.cancel()


@tournament_test(30)
async def test_the_entry_ends_after_entry_ms_without_the_entrants_that_stayed_away(
    server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
) -> None:
    hosted = await host(tapi, entry_ms=300)
    director = director_of(server, hosted.tournament_id)
    only = enter(tapi, hosted.tournament_id, hosted.keys[1], GIVEN[1])
    await only.read()
    await eventually(lambda: bool(director.match_ids), what="the first match")
    assert director.entry.sealed == [None, GIVEN[1], None]
    only.cancel()


def test_the_seal_survives_a_restart_and_offers_are_kept_until_it(data_dir: Path) -> None:
    """An offer is durable before the seal; the seal, once written, is what a restarted
    server plans from (never a second one)."""

    async def scenario() -> None:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            hosted = await host(tapi, entry_ms=60_000)
            tid = hosted.tournament_id
            first = enter(tapi, tid, hosted.keys[0], GIVEN[0])
            await first.read()
            first.cancel()
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            director = director_of(server, tid)
            assert not director.match_ids  # still waiting for b and c
            entries = [enter(tapi, tid, key) for key in hosted.keys[1:]]
            for entry in entries:
                await entry.read()
            await eventually(lambda: bool(director.match_ids), what="the first match")
            sealed = await server.arena.store.sealed_contributions(tid)
            assert sealed == [GIVEN[0], None, None]
            assert director.entry.sealed == sealed
            for entry in entries:
                entry.cancel()
        async with served(data_dir) as server:
            director = director_of(server, tid)
            await eventually(lambda: director.entry.sealed is not None, what="the seal read")
            assert director.entry.sealed == sealed

    run(scenario(), 90)


@tournament_test(30)
async def test_a_contribution_of_the_wrong_size_is_refused_and_changes_nothing(
    server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
) -> None:
    hosted = await host(tapi, entry_ms=60_000)
    for size in (1, 31, 33, 1000):
        call = tapi.Enter(
            tpb.EnterRequest(tournament_id=hosted.tournament_id, contribution=b"\x01" * size),
            metadata=auth(hosted.keys[0]),
            timeout=RPC,
        )
        error = await stream_failure(call)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "32 bytes" in (error.details() or "")
    offers = await server.arena.store.contribution_offers(hosted.tournament_id)
    assert offers == {}
