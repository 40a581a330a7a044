"""What a ladder shows of its duplicate groups still being played: ``GetLadder`` with
``include_playing`` lists each of their matches (id, lineup, state, never a result), and a
stranger who opens one is refused with words that name the ladder and say when it becomes
readable (docs/rules.md §4.10). Closing the ladder voids the waiting matches, so the group
still ends and its running match becomes readable with it. An in-process server on
127.0.0.1:0; every wait is bounded."""

from __future__ import annotations

from pathlib import Path

import grpc

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from .support import address_of, channel_to, failure, secret, served

CREATOR = "c" * 40
NAMES = ("a", "b", "c")


def test_a_ladders_groups_in_play_are_listed_without_results_and_held_back_by_name(
    data_dir: Path,
) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, api):
            ladders = ladder_pb2_grpc.LadderServiceStub(channel)
            made = lpb.CreateLadderRequest(
                game="triathlon",
                players=3,
                time_control=spb.TimeControl(move_ms=60_000),
                entrants=[tpb.EntrantSpec(name=n, key=secret()) for n in NAMES],
                concurrency=1,
                creator_secret=CREATOR,
            )
            ladder_id = (await ladders.CreateLadder(made, timeout=RPC)).ladder.ladder_id
            streams = [
                ladders.EnterLadder(
                    lpb.EnterLadderRequest(ladder_id=ladder_id), metadata=auth(e.key), timeout=30
                )
                for e in made.entrants
            ]
            assigned = []
            for stream in streams:
                entered, told = await stream.read(), await stream.read()
                assert isinstance(entered, lpb.EnterLadderResponse)
                assert isinstance(told, lpb.EnterLadderResponse)
                assert entered.WhichOneof("kind") == "entered"
                assigned.append(told.match)
            match_id = assigned[0].match_id
            assert {a.match_id for a in assigned} == {match_id}

            async def now(include: bool = True) -> lpb.GetLadderResponse:
                request = lpb.GetLadderRequest(ladder_id=ladder_id, include_playing=include)
                return await ladders.GetLadder(request, timeout=RPC)

            assert not (await now(include=False)).playing
            playing = (await now()).playing
            # One group of three rotations: the first running, the others waiting for room
            # (concurrency 1), each seat's player rotated.
            assert [(p.index, p.group) for p in playing] == [(0, 0), (1, 0), (2, 0)]
            assert [p.status for p in playing] == [
                spb.MATCH_STATUS_RUNNING,
                spb.MATCH_STATUS_UNSPECIFIED,
                spb.MATCH_STATUS_UNSPECIFIED,
            ]
            assert [p.match_id for p in playing] == [match_id, "", ""]
            lineup = list(playing[0].players)
            assert sorted(lineup) == sorted(NAMES) and list(assigned[0].names) == lineup
            assert list(playing[1].players) == lineup[1:] + lineup[:1]
            assert not any(p.cancelled for p in playing)

            stranger = await failure(
                api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=RPC)
            )
            assert stranger.code() == grpc.StatusCode.FAILED_PRECONDITION
            words = stranger.details() or ""
            assert f"duplicate group 0 of ladder {ladder_id}" in words, words
            assert "readable once all 3 of its rotations have ended (0 have)" in words, words
            seat = assigned[0].seat
            mine = await api.GetMatch(
                spb.GetMatchRequest(match_id=match_id),
                metadata=auth(assigned[0].token),
                timeout=RPC,
            )
            assert mine.match.seats[seat].taken

            # Closed: the waiting rotations are voided, the running one plays on, and the
            # group ends with it (the refusal no longer says "once the ladder has ended").
            await ladders.CloseLadder(
                lpb.CloseLadderRequest(ladder_id=ladder_id), metadata=auth(CREATOR), timeout=RPC
            )
            playing = (await now()).playing
            assert [p.status for p in playing] == [
                spb.MATCH_STATUS_RUNNING,
                spb.MATCH_STATUS_ENDED,
                spb.MATCH_STATUS_ENDED,
            ]
            assert [p.cancelled for p in playing] == [False, True, True]
            assert all(p.match_id for p in playing)
            again = await failure(api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=RPC))
            assert "readable once all 3 of its rotations have ended (2 have)" in (
                again.details() or ""
            )
            for stream in streams:
                stream.cancel()

    run(scenario(), 60)
