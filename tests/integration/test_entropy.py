"""Contributed entropy on a real server (docs/rules.md §4.8): seats mix 32 bytes each into the
deal seed, the first deal waits for the last of them, and the auditor recomputes the deal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.engine import events as ev
from cardarena.engine import mix_seed
from cardarena.engine.match import setup
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import Table, audit, play_out, refused, snapshot_of, with_api
from ..serverproc import ServerProcess

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration
SEED = bytes(32)
GIVEN = [bytes(range(32)), b"", b"\xff" * 32, b""]
"""RULES.md §4's mixing vector: seats 0 and 2 contribute, 1 and 3 do not."""
VECTOR = "f820caae3c19c56432d510ef51f621cf43f4131811e25206356cefca6a26694b"


def first_deal(seed: bytes, match_id: str, seq: int) -> pb.Dealt:
    """The first Dealt a Pentathlon for four dealt from ``seed`` writes."""
    match = setup("pentathlon", players=4).start(seed)
    dealt = next(e for e in match.log if isinstance(e, ev.Dealt))
    return codec.event_to_pb(dealt, seq, match_id).dealt


async def created(api: MatchServiceAsyncStub, game: str, players: int, **fields: Any) -> str:
    made = await api.CreateMatch(
        spb.CreateMatchRequest(game=game, players=players, **fields), timeout=10
    )
    return made.match.match_id


def kinds(log: spb.GetMatchLogResponse) -> list[str]:
    return [str(pb.Event.FromString(e.event).WhichOneof("kind")) for e in log.entries]


def test_the_deal_waits_for_every_seat_and_mixes_their_contributions(
    server: ServerProcess,
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        match_id = await created(api, "pentathlon", 4, seed=SEED)
        tokens: list[str] = []
        for seat, given in enumerate(GIVEN):
            if seat == 3:  # three seats in, no card is dealt yet: nobody sees a hand
                waiting = await snapshot_of(api, match_id, 0, tokens[0])
                assert all(not h.cards for h in waiting.hands)
            joined = await api.JoinMatch(
                spb.JoinMatchRequest(
                    match_id=match_id, name=f"s{seat}", seat=seat, contribution=given
                ),
                timeout=10,
            )
            tokens.append(joined.token)
        mine = await snapshot_of(api, match_id, 0, tokens[0])
        assert mine.hands[0].cards  # the last join dealt
        await play_out(api, Table(match_id, tokens))
        log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=10)
        audit(log)
        order = kinds(log)
        last_join = max(i for i, k in enumerate(order) if k == "seat_joined")
        assert order.index("dealt") == last_join + 1  # dealt in the last join's write
        joins = [
            pb.Event.FromString(e.event).seat_joined
            for e in log.entries
            if pb.Event.FromString(e.event).WhichOneof("kind") == "seat_joined"
        ]
        assert [bytes(j.contribution) for j in sorted(joins, key=lambda j: j.seat)] == GIVEN
        mixed = mix_seed(SEED, [g or None for g in GIVEN])
        assert mixed.hex() == VECTOR
        # The first deal is the mixed seed's (docs/rules.md §4.8), not the seed's.
        logged = next(
            pb.Event.FromString(e.event)
            for e in log.entries
            if pb.Event.FromString(e.event).WhichOneof("kind") == "dealt"
        )
        assert logged.dealt == first_deal(mixed, match_id, logged.seq)
        assert logged.dealt != first_deal(SEED, match_id, logged.seq)

    with_api(server.address, scenario, 60)


def test_a_contribution_of_the_wrong_size_or_in_a_shared_seed_match_is_refused(
    server: ServerProcess,
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        match_id = await created(api, "triathlon", 3)
        get = spb.GetMatchRequest(match_id=match_id)
        before = (await api.GetMatch(get, timeout=10)).match.last_seq
        for size in (1, 31, 33, 64):
            call = api.JoinMatch(
                spb.JoinMatchRequest(match_id=match_id, contribution=b"\x01" * size),
                timeout=10,
            )
            assert await refused(call) == grpc.StatusCode.INVALID_ARGUMENT
        info = (await api.GetMatch(get, timeout=10)).match
        assert not any(seat.taken for seat in info.seats)  # nothing taken
        assert info.last_seq == before  # nothing written

    with_api(server.address, scenario, 30)
