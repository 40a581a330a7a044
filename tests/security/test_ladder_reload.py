"""A closed ladder is final, and anyone may read it, without a credential.

Read back after a restart, it was rebuilt whole on its first request: every group's lineup,
every match's row and outcome, folded again; ListLadders did so for every closed ladder of a
page, oldest first only. Once its last match has counted, its final signed snapshot is kept
as a row and its director leaves memory: after a restart ``GetLadder`` and ``ListLadders``
(either way round, keyset pages) read that row and nothing of its groups or matches, and a
snapshot page reads only its own rows, the same bytes under the same signature. In-process
servers on 127.0.0.1:0; every wait is bounded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient
from cardarena.clients.client.ladders import Snapshot
from cardarena.clients.tournament.entrant import LadderEntry, play_entrant
from cardarena.server.ladders.director import LadderDirector
from cardarena.server.store import EventStore
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..waiting import eventually
from .support import address_of, channel_to, secret, served

CREATOR = "c" * 40
NAMES = ("a", "b", "c")
GROUPS = 10
"""Complete groups played before the ladder closes (3 matches each)."""


def create(name: str, concurrency: int = 6) -> lpb.CreateLadderRequest:
    return lpb.CreateLadderRequest(
        name=name,
        game="triathlon",
        players=3,
        time_control=spb.TimeControl(move_ms=10_000),
        entrants=[tpb.EntrantSpec(name=n, key=secret()) for n in NAMES],
        concurrency=concurrency,
        creator_secret=CREATOR,
    )


async def listing(api: Any, *, newest_first: bool, page_size: int) -> list[lpb.LadderInfo]:
    """Every ladder, a page at a time."""
    infos: list[lpb.LadderInfo] = []
    token = ""
    while True:
        page = await api.ListLadders(
            lpb.ListLaddersRequest(
                page_size=page_size, page_token=token, newest_first=newest_first
            ),
            timeout=RPC,
        )
        infos.extend(page.ladders)
        token = page.next_page_token
        if not token:
            return infos


async def snapshot_of(api: Any, ladder_id: str, limit: int) -> Snapshot:
    first = await api.GetLadderSnapshot(
        lpb.GetLadderSnapshotRequest(ladder_id=ladder_id, matches_limit=limit), timeout=RPC
    )
    counted = first.snapshot.ladder.counted
    matches = list(first.matches)
    while len(matches) < counted:
        page = await api.GetLadderSnapshot(
            lpb.GetLadderSnapshotRequest(
                ladder_id=ladder_id, counted=counted, matches_from=len(matches), matches_limit=limit
            ),
            timeout=RPC,
        )
        assert page.snapshot == first.snapshot and page.signature == first.signature
        matches.extend(page.matches)
    return Snapshot(first.snapshot, matches, first.signature)


def test_a_closed_ladder_is_read_after_a_restart_from_its_row_not_its_matches(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def before() -> tuple[list[str], lpb.LadderInfo, Snapshot]:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            api = ladder_pb2_grpc.LadderServiceStub(channel)
            made = create("played")
            played = (await api.CreateLadder(made, timeout=RPC)).ladder.ladder_id
            # Two more, closed at once (nothing to count) and one left running: the listing's
            # order, and a running ladder listed beside the kept ones.
            empty = (await api.CreateLadder(create("empty"), timeout=RPC)).ladder.ladder_id
            running = (await api.CreateLadder(create("running"), timeout=RPC)).ladder.ladder_id
            await api.CloseLadder(
                lpb.CloseLadderRequest(ladder_id=empty), metadata=auth(CREATOR), timeout=RPC
            )
            async with ArenaClient(address_of(server), retry_for=10) as client:
                entrants = [
                    asyncio.create_task(
                        play_entrant(
                            client,
                            played,
                            e.key,
                            lambda _assigned: PythonDecider(RandomBot),
                            reconnect_for=10,
                            capacity=3,
                            ladder=LadderEntry(""),
                            log=lambda _text: None,
                        )
                    )
                    for e in made.entrants
                ]

                async def counted() -> bool:
                    got = await api.GetLadder(lpb.GetLadderRequest(ladder_id=played), timeout=RPC)
                    return bool(got.ladder.counted >= GROUPS * 3)

                await eventually(counted, within=60, what=f"{GROUPS} groups counted")
                await api.CloseLadder(
                    lpb.CloseLadderRequest(ladder_id=played), metadata=auth(CREATOR), timeout=RPC
                )
                await asyncio.wait_for(asyncio.gather(*entrants), 30)

            async def kept() -> bool:
                return not {played, empty} & set(server.ladders.directors)

            await eventually(kept, within=30, what="the closed ladders kept as rows")
            assert running in server.ladders.directors
            final = (
                await api.GetLadder(lpb.GetLadderRequest(ladder_id=played), timeout=RPC)
            ).ladder
            assert final.status == lpb.LADDER_STATUS_CLOSED and final.counted >= GROUPS * 3
            assert final.counted % 3 == 0 and final.running == 0
            whole = await snapshot_of(api, played, 1000)
            assert whole.snapshot.ladder == final and len(whole.matches) == final.counted
            return [played, empty, running], final, whole

    ids, final, whole = run(before(), 120)
    played = ids[0]

    reads: dict[str, list[Any]] = {"groups": [], "matches": [], "directors": []}
    groups_of, matches_of = EventStore.ladder_groups, EventStore.get_matches
    director_init = LadderDirector.__init__

    async def groups_read(self: EventStore, ladder_id: str, first: int, limit: int) -> Any:
        reads["groups"].append((ladder_id, first, limit))
        return await groups_of(self, ladder_id, first, limit)

    async def matches_read(self: EventStore, match_ids: Sequence[str]) -> Any:
        reads["matches"].append(len(match_ids))
        return await matches_of(self, match_ids)

    def director_made(self: LadderDirector, record: Any, *args: Any, **kwargs: Any) -> None:
        reads["directors"].append(record.ladder_id)
        director_init(self, record, *args, **kwargs)

    monkeypatch.setattr(EventStore, "ladder_groups", groups_read)
    monkeypatch.setattr(EventStore, "get_matches", matches_read)
    monkeypatch.setattr(LadderDirector, "__init__", director_made)

    async def after() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (channel, _):
            api = ladder_pb2_grpc.LadderServiceStub(channel)
            # Only the running ladder is directed again, at start.
            assert reads["directors"] == [ids[2]]
            reads["groups"].clear()
            reads["matches"].clear()
            got = await api.GetLadder(
                lpb.GetLadderRequest(ladder_id=played, include_playing=True), timeout=RPC
            )
            assert got.ladder == final and not got.playing
            oldest = await listing(api, newest_first=False, page_size=1)
            newest = await listing(api, newest_first=True, page_size=2)
            assert [i.ladder_id for i in oldest] == ids
            assert [i.ladder_id for i in newest] == ids[::-1]
            assert oldest[0] == final and newest[-1] == final
            assert reads == {"groups": [], "matches": [], "directors": [ids[2]]}, reads

            # A page of its snapshot: that page's rows, the same lines under the same
            # signature as before the restart.
            page = await api.GetLadderSnapshot(
                lpb.GetLadderSnapshotRequest(ladder_id=played, matches_from=3, matches_limit=3),
                timeout=RPC,
            )
            assert page.snapshot == whole.snapshot and page.signature == whole.signature
            assert list(page.matches) == whole.matches[3:6]
            assert reads["groups"] == [(played, 1, 1)] and reads["matches"] == [3], reads
            again = await snapshot_of(api, played, 4)
            assert again == whole
            assert played not in server.ladders.directors
            assert reads["directors"] == [ids[2]]

    run(after(), 60)
