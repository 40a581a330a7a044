"""A restart neither overloads a ladder's entrants nor begins a group nobody began (a review
of the rule that a begun duplicate group is played out, tests/security/test_ladder_leaver.py).

Right after a restart nobody is connected yet, so every entrant counts as away: the begun
groups' waiting rotations must still wait for their entrants' room, or a bot that plays one
match at a time would time out in the others for the host's stop. And a void cut short by the
stop (its match made, not yet cancelled) must stay a void: seated and played, it would begin
its group and charge its absent entrant for every rotation. Two in-process servers, one after
the other, on one data dir; every wait is bounded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.app import Server
from cardarena.server.hosting.clock import WALL_TIME
from cardarena.server.hosting.match import HostedMatch
from cardarena.server.ladders.director import RUNNING, WAITING, LadderDirector
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import address_of, channel_to, secret, served

NAMES = ("a", "b", "c")


async def open_ladder(channel: grpc.aio.Channel, keys: dict[str, str]) -> tuple[str, list[Any]]:
    """A Triathlon ladder of three entrants, each entered with room for one match; its id
    and the entrants' streams (each read past its ``entered``)."""
    ladders = ladder_pb2_grpc.LadderServiceStub(channel)
    made = lpb.CreateLadderRequest(
        game="triathlon",
        players=3,
        time_control=spb.TimeControl(move_ms=30_000),
        fault_policy=tpb.FaultPolicy(forfeit_after=1),
        entrants=[tpb.EntrantSpec(name=n, key=keys[n]) for n in NAMES],
        concurrency=3,
        creator_secret="c" * 40,
    )
    made.options.update({"max_deals": 1})
    ladder_id = (await ladders.CreateLadder(made, timeout=RPC)).ladder.ladder_id
    return ladder_id, await enter(channel, ladder_id, keys)


async def enter(channel: grpc.aio.Channel, ladder_id: str, keys: dict[str, str]) -> list[Any]:
    """Every entrant's stream into the ladder, each with room for one match, read past its
    ``entered``."""
    ladders = ladder_pb2_grpc.LadderServiceStub(channel)
    streams = []
    for name in NAMES:
        stream = ladders.EnterLadder(
            lpb.EnterLadderRequest(ladder_id=ladder_id, capacity=1),
            metadata=auth(keys[name]),
            timeout=30,
        )
        entered = await stream.read()
        assert isinstance(entered, lpb.EnterLadderResponse)
        assert entered.WhichOneof("kind") == "entered"
        streams.append(stream)
    return streams


async def ladder_info(channel: grpc.aio.Channel, ladder_id: str) -> lpb.LadderInfo:
    ladders = ladder_pb2_grpc.LadderServiceStub(channel)
    request = lpb.GetLadderRequest(ladder_id=ladder_id)
    return (await ladders.GetLadder(request, timeout=RPC)).ladder


def director_of(server: Server, ladder_id: str) -> LadderDirector:
    return server.ladders.directors[ladder_id]


def test_after_a_restart_a_begun_groups_rotations_wait_for_their_entrants_room(
    data_dir: Path,
) -> None:
    keys = {name: secret() for name in NAMES}

    async def before() -> str:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            ladder_id, streams = await open_ladder(channel, keys)
            for stream in streams:
                told = await stream.read()
                assert isinstance(told, lpb.EnterLadderResponse) and told.match.index == 0
            director = director_of(server, ladder_id)
            assert director.groups[0].state == [RUNNING, WAITING, WAITING]
            for stream in streams:
                stream.cancel()
            return ladder_id

    ladder_id = run(before(), 60)

    async def after() -> None:
        async with served(data_dir) as server:
            director = director_of(server, ladder_id)
            await eventually(director.ready.is_set, within=30, what="the ladder read back")
            await director.fill()  # a scheduling round with nobody back yet
            assert director.groups[0].state == [RUNNING, WAITING, WAITING]
            assert len(director.match_ids) == 1
            assert all(director.busy[e] <= director.capacity[e] for e in range(3)), director.busy

    run(after(), 60)


async def never_starts(self: Any, *args: Any) -> None:
    """``LadderDirector._start`` patched: every rotation waits for room."""


@contextlib.contextmanager
def rotations_never_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """While in force, no ladder rotation starts (:func:`never_starts`); the patch, for more."""
    with monkeypatch.context() as patched:
        patched.setattr(LadderDirector, "_start", never_starts)
        yield patched


async def group_not_started(
    server: Server, channel: grpc.aio.Channel, keys: dict[str, str]
) -> tuple[str, list[Any]]:
    """:func:`open_ladder` with :func:`never_starts` in force: once group 0 is made, none of
    its rotations started."""
    ladder_id, streams = await open_ladder(channel, keys)
    director = director_of(server, ladder_id)
    await eventually(lambda: 0 in director.groups, within=10, what="group 0")
    assert director.groups[0].state == [WAITING] * 3
    return ladder_id, streams


def test_after_a_restart_a_group_not_begun_waits_for_its_entrants_to_come_back(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop was the host's: a group none of whose rotations had started is not voided
    because nobody is back at the first scheduling round after the restart. It waits through
    the reconnection window, and is played once its entrants are back."""
    keys = {name: secret() for name in NAMES}
    with rotations_never_start(monkeypatch):

        async def before() -> str:
            async with served(data_dir) as server, channel_to(address_of(server)) as (ch, _):
                ladder_id, _streams = await group_not_started(server, ch, keys)
                return ladder_id  # the server stops with every entrant connected

        ladder_id = run(before(), 60)

    async def after() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            director = director_of(server, ladder_id)
            await eventually(director.ready.is_set, within=30, what="the ladder read back")
            await director.fill()  # a scheduling round with nobody back yet
            group = director.groups.get(0)
            assert group is not None, "group 0 voided while its entrants had the window"
            assert group.state == [WAITING] * 3 and not director.match_ids
            streams = await enter(channel, ladder_id, keys)
            for stream in streams:
                told = await asyncio.wait_for(stream.read(), RPC)
                assert isinstance(told, lpb.EnterLadderResponse) and told.match.index == 0
            assert director.groups[0].state[0] == RUNNING
            info = await ladder_info(channel, ladder_id)
            assert info.voided == 0, info
            for stream in streams:
                stream.cancel()

    run(after(), 60)


def test_a_window_opened_for_something_else_does_not_hold_a_leavers_group(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reconnection window is the arena's (a match taken over opens it too): a group
    made by this process, not read back after a stop, is voided as soon as an entrant
    leaves it, window or not (a review's find)."""
    keys = {name: secret() for name in NAMES}
    with rotations_never_start(monkeypatch):

        async def scenario() -> None:
            async with served(data_dir) as server, channel_to(address_of(server)) as (ch, _):
                ladder_id, streams = await group_not_started(server, ch, keys)
                server.arena.reconnection.open(WALL_TIME.now())  # as a takeover would
                streams[2].cancel()  # c leaves a group not begun

                async def group_voided() -> bool:
                    return (await ladder_info(ch, ladder_id)).voided == 3

                await eventually(group_voided, within=15, what="group 0 voided")
                for stream in streams[:2]:
                    stream.cancel()

        run(scenario(), 60)


def test_a_void_cut_short_by_a_stop_stays_a_void(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = {name: secret() for name in NAMES}
    voiding: list[str] = []

    async def stops_in_cancel(self: Any, reason: str) -> None:
        voiding.append(reason)
        await asyncio.Event().wait()  # the process stops here

    with rotations_never_start(monkeypatch) as patched:
        patched.setattr(HostedMatch, "cancel", stops_in_cancel)

        async def before() -> str:
            async with served(data_dir) as server, channel_to(address_of(server)) as (ch, _):
                ladder_id, streams = await group_not_started(server, ch, keys)
                streams[2].cancel()  # c leaves a group not begun: rotation 0 is voided...
                await eventually(lambda: voiding, within=10, what="the void under way")
                for stream in streams[:2]:
                    stream.cancel()
                return ladder_id

        ladder_id = run(before(), 60)
    assert voiding == ["voided: c away"]

    async def after() -> None:
        async with served(data_dir, reconnect_grace=0.5) as server:
            director = director_of(server, ladder_id)
            await eventually(director.ready.is_set, within=30, what="the ladder read back")
            # ... and stays one: the group does not begin, nobody is seated or charged, and
            # (nobody back once the reconnection window has closed) its other rotations are
            # voided too.
            async with channel_to(address_of(server)) as (channel, _):

                async def group_counted() -> bool:
                    return (await ladder_info(channel, ladder_id)).counted == 3

                await eventually(group_counted, within=30, what="group 0 counted")
                info = await ladder_info(channel, ladder_id)
            assert info.voided == 3 and not director.match_ids, info
            assert all(row.faults == 0 and row.matches == 0 for row in info.board), info.board

    run(after(), 60)
