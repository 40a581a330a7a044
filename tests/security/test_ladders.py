"""The LadderService against hostile clients: every bad CreateLadder field is INVALID_ARGUMENT
naming it; EnterLadder takes only this ladder's keys, a well-formed version and a capacity in
bounds; an entrant cannot grow the board without bound by cycling versions; only the operator
or the creator closes a ladder; a snapshot page past the snapshot is refused by name.
In-process servers on 127.0.0.1:0; every wait is bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.api import ladders as ladders_api
from cardarena.server.ladders import director as ladder_director
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import address_of, channel_to, failure, secret, served

INVALID = grpc.StatusCode.INVALID_ARGUMENT


async def ladders_get(api: Any, ladder_id: str) -> lpb.LadderInfo:
    answer = await api.GetLadder(lpb.GetLadderRequest(ladder_id=ladder_id), timeout=RPC)
    assert isinstance(answer, lpb.GetLadderResponse)
    return answer.ladder


CREATOR = "c" * 40


def request(**fields: Any) -> lpb.CreateLadderRequest:
    made = lpb.CreateLadderRequest(
        game="triathlon",
        time_control=spb.TimeControl(move_ms=60_000),
        entrants=[tpb.EntrantSpec(name=n, key=secret()) for n in ("a", "b", "c")],
        creator_secret=CREATOR,
    )
    for name, value in fields.items():
        target = made
        *path, last = name.split("__")
        for part in path:
            target = getattr(target, part)
        setattr(target, last, value)
    return made


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("no clock", {"time_control__move_ms": 0}, "time_control.move_ms"),
    ("unknown game", {"game": "nope"}, "game"),
    ("concurrency", {"concurrency": 257}, "concurrency"),
    ("long name", {"name": "n" * 101}, "name"),
    ("increment without bank", {"time_control__increment_ms": 5}, "time_control.increment_ms"),
    ("short creator secret", {"creator_secret": "x"}, "creator_secret"),
]


def test_ladders_refuse_bad_input_by_name_and_keep_their_secrets(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ladder_director, "MAX_VERSIONS", 3)

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            api = ladder_pb2_grpc.LadderServiceStub(channel)
            wrong = []
            for label, fields, named in BAD:
                error = await failure(api.CreateLadder(request(**fields), timeout=RPC))
                if error.code() != INVALID or named not in (error.details() or ""):
                    wrong.append((label, error.code().name, error.details()))
            assert not wrong, wrong
            made = request()
            created = await api.CreateLadder(made, timeout=RPC)
            ladder_id = created.ladder.ladder_id
            key = made.entrants[0].key

            async def enter(**fields: Any) -> grpc.aio.AioRpcError:
                call = api.EnterLadder(
                    lpb.EnterLadderRequest(ladder_id=ladder_id, **fields),
                    metadata=auth(key),
                    timeout=RPC,
                )
                return await failure(call.read())

            bad_version = await enter(version="a b")
            assert bad_version.code() == INVALID and "version" in (bad_version.details() or "")
            too_many = await enter(capacity=257)
            assert too_many.code() == INVALID and "capacity" in (too_many.details() or "")
            stranger = await failure(
                api.EnterLadder(
                    lpb.EnterLadderRequest(ladder_id=ladder_id),
                    metadata=auth(secret()),
                    timeout=RPC,
                ).read()
            )
            assert stranger.code() == grpc.StatusCode.UNAUTHENTICATED

            # Versions: each one a board row for good, so an entrant may not cycle through
            # thousands of them.
            streams = []
            for version in ("v1", "v2", "v3"):
                call = api.EnterLadder(
                    lpb.EnterLadderRequest(ladder_id=ladder_id, version=version),
                    metadata=auth(key),
                    timeout=RPC,
                )
                first = await call.read()
                assert isinstance(first, lpb.EnterLadderResponse)
                assert first.WhichOneof("kind") == "entered"
                streams.append(call)
            fourth = await enter(version="v4")
            assert fourth.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "at most 3" in (fourth.details() or "")
            for call in streams:
                call.cancel()

            page = await failure(
                api.GetLadderSnapshot(
                    lpb.GetLadderSnapshotRequest(ladder_id=ladder_id, matches_from=10),
                    timeout=RPC,
                )
            )
            assert page.code() == INVALID and "matches_from" in (page.details() or "")
            missing = await failure(
                api.GetLadder(lpb.GetLadderRequest(ladder_id="0" * 16), timeout=RPC)
            )
            assert missing.code() == grpc.StatusCode.NOT_FOUND

            refused = await failure(
                api.CloseLadder(
                    lpb.CloseLadderRequest(ladder_id=ladder_id), metadata=auth(key), timeout=RPC
                )
            )
            assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
            closed = await api.CloseLadder(
                lpb.CloseLadderRequest(ladder_id=ladder_id, reason="done"),
                metadata=auth(CREATOR),
                timeout=RPC,
            )
            assert closed.ladder.status == lpb.LADDER_STATUS_CLOSED

            # Nothing left to count: kept as a row, and its director leaves memory; it is
            # read, entered and closed again from the row, its creator's still.
            async def kept() -> bool:
                return ladder_id not in server.ladders.directors

            await eventually(kept, within=10, what="the closed ladder kept as a row")
            again = await ladders_get(api, ladder_id)
            assert again.status == lpb.LADDER_STATUS_CLOSED and again.counted == 0
            stranger_closes = await failure(
                api.CloseLadder(
                    lpb.CloseLadderRequest(ladder_id=ladder_id), metadata=auth(key), timeout=RPC
                )
            )
            assert stranger_closes.code() == grpc.StatusCode.PERMISSION_DENIED
            reclosed = await api.CloseLadder(
                lpb.CloseLadderRequest(ladder_id=ladder_id),
                metadata=auth(CREATOR),
                timeout=RPC,
            )
            assert reclosed.ladder == again
            late = api.EnterLadder(
                lpb.EnterLadderRequest(ladder_id=ladder_id), metadata=auth(key), timeout=RPC
            )
            told = await late.read()
            assert isinstance(told, lpb.EnterLadderResponse)
            assert told.WhichOneof("kind") == "closed" and told.closed == again
            assert ladder_id not in server.ladders.directors

    run(scenario(), 60)


def named(*names: str) -> lpb.CreateLadderRequest:
    made = request()
    del made.entrants[:]
    made.entrants.extend(tpb.EntrantSpec(name=n, key=secret()) for n in names)
    return made


def test_no_entrant_can_take_another_entrants_board_name(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board names an entrant at a version ``name@version``: with entrants "alice" and
    "alice@v2", alice at version v2 was the player "alice@v2" too, and the two were one
    player, alice given two seats of one match (an adversarial review's find). A name with
    '@' is refused at CreateLadder (and names that differ only by spaces at their ends, for
    ladders and tournaments alike); a ladder that has both anyway (one created before) refuses
    the version that would make the other's name, whichever enters first."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            api = ladder_pb2_grpc.LadderServiceStub(channel)
            for names, at in ((("alice", "alice@v2", "bob"), 1), (("a", "b", " a"), 2)):
                error = await failure(api.CreateLadder(named(*names), timeout=RPC))
                assert error.code() == INVALID, error
                assert f"entrants[{at}].name" in (error.details() or ""), error.details()

            monkeypatch.setattr(ladders_api, "board_names", lambda names: None)  # as before
            made = named("alice", "alice@v2", "bob")
            ladder_id = (await api.CreateLadder(made, timeout=RPC)).ladder.ladder_id
            keys = {e.name: e.key for e in made.entrants}

            def enter(name: str, version: str = "") -> Any:
                return api.EnterLadder(
                    lpb.EnterLadderRequest(ladder_id=ladder_id, version=version),
                    metadata=auth(keys[name]),
                    timeout=RPC,
                )

            squatter = await failure(enter("alice", "v2").read())
            assert squatter.code() == INVALID and "another entrant's" in (squatter.details() or "")
            owner = enter("alice@v2")
            first = await owner.read()
            assert first.WhichOneof("kind") == "entered" and first.entered.player == "alice@v2"
            again = await failure(enter("alice", "v2").read())
            assert again.code() == INVALID
            other = enter("alice", "v3")
            assert (await other.read()).entered.player == "alice@v3"
            for call in (owner, other):
                call.cancel()

    run(scenario(), 60)
