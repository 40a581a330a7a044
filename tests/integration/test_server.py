"""A real server on 127.0.0.1:0: a whole match, the log, bad input, and a SIGKILL restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from google.protobuf import struct_pb2

from cardarena.engine import PASS
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import Table, audit, auth, play_out, seat_player, snapshot_of, stub
from ..serverproc import ServerProcess
from ..waiting import eventually

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration
SEED = bytes(range(32))


async def create_and_join(
    api: MatchServiceAsyncStub, game: str, players: int, **options: Any
) -> tuple[str, list[str]]:
    struct = struct_pb2.Struct()
    struct.update(options)
    created = await api.CreateMatch(
        spb.CreateMatchRequest(game=game, players=players, options=struct, seed=SEED), timeout=10
    )
    match_id = created.match.match_id
    tokens = []
    for seat in range(players):
        joined = await api.JoinMatch(
            spb.JoinMatchRequest(match_id=match_id, name=f"bot{seat}"), timeout=10
        )
        assert joined.seat == seat
        tokens.append(joined.token)
    return match_id, tokens


def test_a_whole_match_and_its_public_log(server_process: ServerProcess) -> None:
    async def scenario(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            games = await api.ListGames(spb.ListGamesRequest(), timeout=10)
            assert {g.name for g in games.games} >= {"hexathlon", "triathlon", "crazy_sixes"}
            match_id, tokens = await create_and_join(
                api, "pentathlon", 3, rounds=["pass", "fan_tan"]
            )
            info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)).match
            assert info.status == spb.MATCH_STATUS_RUNNING and not info.seed
            with pytest.raises(grpc.aio.AioRpcError) as early:
                await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=10)
            assert early.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            spectator = await snapshot_of(api, match_id)
            assert all(h.hidden for h in spectator.hands)
            mine = await snapshot_of(api, match_id, 0, tokens[0])
            assert not mine.hands[0].hidden and all(h.hidden for h in mine.hands[1:])
            actions = await play_out(api, Table(match_id, tokens))
            assert actions > 50
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=10)
            assert log.seed == SEED
            audit(log)

    asyncio.run(scenario(server_process.address))


def test_bad_input_gets_the_right_codes_and_changes_nothing(server_process: ServerProcess) -> None:
    async def scenario(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            match_id, tokens = await create_and_join(api, "hexathlon", 4)
            snap = await snapshot_of(api, match_id, 0, tokens[0])
            seat = snap.to_act
            actor = await snapshot_of(api, match_id, seat, tokens[seat])
            other = (seat + 1) % 4
            good = actor.legal_actions[0]

            def submit(**fields: object) -> spb.SubmitActionRequest:
                base: dict[str, object] = {
                    "match_id": match_id,
                    "seat": seat,
                    "action": good,
                    "expected_seq": actor.seq,
                }
                base.update(fields)
                return spb.SubmitActionRequest(**base)  # type: ignore[arg-type]

            cases = [
                (submit(), (), grpc.StatusCode.UNAUTHENTICATED),
                (submit(), auth("forged"), grpc.StatusCode.UNAUTHENTICATED),
                (submit(), auth(tokens[other]), grpc.StatusCode.PERMISSION_DENIED),
                (submit(seat=other), auth(tokens[other]), grpc.StatusCode.FAILED_PRECONDITION),
                (submit(seat=9), auth(tokens[seat]), grpc.StatusCode.INVALID_ARGUMENT),
                (submit(action=pb.Action()), auth(tokens[seat]), grpc.StatusCode.INVALID_ARGUMENT),
                (
                    submit(action=pb.Action(play=pb.Card(suit=pb.SUIT_CLUBS, rank=1))),
                    auth(tokens[seat]),
                    grpc.StatusCode.INVALID_ARGUMENT,
                ),
                (
                    submit(action=pb.Action(play=pb.Card(suit=pb.SUIT_OROS, rank=6))),
                    auth(tokens[seat]),
                    grpc.StatusCode.INVALID_ARGUMENT,
                ),
                (
                    submit(action=codec.action_to_pb(PASS)),
                    auth(tokens[seat]),
                    grpc.StatusCode.FAILED_PRECONDITION,
                ),
                (submit(expected_seq=actor.seq - 1), auth(tokens[seat]), grpc.StatusCode.ABORTED),
                (submit(match_id="nope"), auth(tokens[seat]), grpc.StatusCode.NOT_FOUND),
                (
                    submit(request_id="has space"),
                    auth(tokens[seat]),
                    grpc.StatusCode.INVALID_ARGUMENT,
                ),
                (submit(request_id="x" * 65), auth(tokens[seat]), grpc.StatusCode.INVALID_ARGUMENT),
            ]
            for request, metadata, code in cases:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await api.SubmitAction(request, metadata=metadata, timeout=10)
                assert refused.value.code() == code, (request, refused.value.details())
                assert refused.value.details()
                for token in tokens:
                    assert token not in (refused.value.details() or "")
            oversized = submit(request_id="y" * 300_000)
            with pytest.raises(grpc.aio.AioRpcError) as too_big:
                await api.SubmitAction(oversized, metadata=auth(tokens[seat]), timeout=10)
            assert too_big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            after = await snapshot_of(api, match_id, seat, tokens[seat])
            assert after.seq == actor.seq, "no refused request changed the match"
            # the same request twice is applied once
            request = submit(request_id="once")
            first = await api.SubmitAction(request, metadata=auth(tokens[seat]), timeout=10)
            again = await api.SubmitAction(request, metadata=auth(tokens[seat]), timeout=10)
            assert (first.first_seq, first.last_seq) == (again.first_seq, again.last_seq)
            assert (await snapshot_of(api, match_id)).seq == first.last_seq
            bad_create = [
                spb.CreateMatchRequest(game="hearts"),
                spb.CreateMatchRequest(game="hexathlon", players=7),
                spb.CreateMatchRequest(game="hexathlon", seed=b"short"),
            ]
            for create in bad_create:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await api.CreateMatch(create, timeout=10)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            struct = struct_pb2.Struct()
            struct.update({"grand": {"multiplier": 0}})
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await api.CreateMatch(
                    spb.CreateMatchRequest(game="hexathlon", options=struct), timeout=10
                )
            assert "grand.multiplier" in (refused.value.details() or "")
            with pytest.raises(grpc.aio.AioRpcError) as taken:
                await api.JoinMatch(spb.JoinMatchRequest(match_id=match_id, seat=0), timeout=10)
            assert taken.value.code() == grpc.StatusCode.ALREADY_EXISTS

    asyncio.run(scenario(server_process.address))


def test_sigkill_mid_play_loses_nothing_acknowledged(tmp_path: Path) -> None:
    """Many matches in full flight, the server killed with SIGKILL, restarted: every match
    finishes, nothing acknowledged is lost, and every log audits clean."""
    data = tmp_path / "data"
    games = [("hexathlon", 4), ("crazy_sixes", 3), ("triathlon", 3), ("heptathlon", 5)] * 3
    acknowledged: dict[str, int] = {}

    async def create_all(address: str) -> list[tuple[str, list[str]]]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            return [await create_and_join(api, game, players) for game, players in games]

    async def play_until_killed(
        address: str, matches: list[tuple[str, list[str]]], server: ServerProcess
    ) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            bots = [
                asyncio.create_task(
                    seat_player(
                        api,
                        match_id,
                        seat,
                        token,
                        after_seq=0,
                        acknowledged=acknowledged,
                        timeout=None,
                    )
                )
                for match_id, tokens in matches
                for seat, token in enumerate(tokens)
            ]

            def in_full_flight() -> bool:
                assert not any(b.done() and b.exception() for b in bots)
                return sum(acknowledged.values()) >= 40 * len(matches)

            await eventually(in_full_flight, within=60, what="40 acknowledged events a match")
            server.kill()
            results = await asyncio.gather(*bots, return_exceptions=True)
            assert all(isinstance(r, grpc.aio.AioRpcError | type(None)) for r in results)

    async def finish(address: str, matches: list[tuple[str, list[str]]]) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            for match_id, _ in matches:
                info = (
                    await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)
                ).match
                assert info.last_seq >= acknowledged.get(match_id, 0), (
                    "an acknowledged event was lost"
                )
            await asyncio.gather(
                *(
                    seat_player(api, match_id, seat, token, acknowledged=acknowledged, timeout=None)
                    for match_id, tokens in matches
                    for seat, token in enumerate(tokens)
                )
            )
            for match_id, _ in matches:
                audit(await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=10))

    server = ServerProcess(data).start()
    matches = asyncio.run(create_all(server.address))
    asyncio.run(play_until_killed(server.address, matches, server))
    with ServerProcess(data) as again:
        asyncio.run(finish(again.address, matches))


def test_create_and_join_are_safe_to_retry(server_process: ServerProcess) -> None:
    """A lost answer is retried with the same request id or token: the same match, the same
    seat, nothing created or taken twice; a reused id for something else is refused."""

    async def main(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            request = spb.CreateMatchRequest(game="triathlon", players=3, request_id="create-1")
            first = (await api.CreateMatch(request, timeout=10)).match
            again = (await api.CreateMatch(request, timeout=10)).match
            assert again.match_id == first.match_id
            assert again.seed_commitment == first.seed_commitment
            other = spb.CreateMatchRequest(game="crazy_sixes", players=3, request_id="create-1")
            with pytest.raises(grpc.aio.AioRpcError) as reused:
                await api.CreateMatch(other, timeout=10)
            assert reused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            assert "create-1" in (reused.value.details() or "")
            bad = spb.CreateMatchRequest(game="triathlon", request_id="has space")
            with pytest.raises(grpc.aio.AioRpcError) as malformed:
                await api.CreateMatch(bad, timeout=10)
            assert malformed.value.code() == grpc.StatusCode.INVALID_ARGUMENT

            token = "t" * 40
            join = spb.JoinMatchRequest(match_id=first.match_id, name="ann", token=token)
            seat = await api.JoinMatch(join, timeout=10)
            repeat = await api.JoinMatch(join, timeout=10)
            assert (repeat.seat, repeat.token) == (seat.seat, token) == (0, token)
            assert sum(s.taken for s in repeat.match.seats) == 1
            elsewhere = spb.JoinMatchRequest(match_id=first.match_id, seat=2, token=token)
            with pytest.raises(grpc.aio.AioRpcError) as moved:
                await api.JoinMatch(elsewhere, timeout=10)
            assert moved.value.code() == grpc.StatusCode.ALREADY_EXISTS
            for weak in ("short", "x" * 129, "y" * 31 + " "):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await api.JoinMatch(
                        spb.JoinMatchRequest(match_id=first.match_id, token=weak), timeout=10
                    )
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert weak not in (refused.value.details() or "")
            log_entries = (await api.GetMatch(spb.GetMatchRequest(match_id=first.match_id))).match
            assert log_entries.last_seq == first.last_seq + 1  # one SeatJoined, not two

    asyncio.run(asyncio.wait_for(main(server_process.address), 30))
