"""A match stored before contributed entropy (its first deal written at creation, before the
seats joined) resumes after an upgrade: the engine deals it from its seed, as it was dealt, and
its last seat's join deals nothing twice."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from cardarena.engine.match import setup
from cardarena.server.hosting import Arena, token_hash
from cardarena.server.store import MatchRecord, SeatRecord, SqliteStore
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

SEED = bytes(range(32))


def test_a_match_dealt_at_creation_resumes_dealt_from_its_seed(tmp_path: Path) -> None:
    async def scenario() -> None:
        path = tmp_path / "store.db"
        prepared = setup("triathlon", players=3)
        dealt_at_once = prepared.start(SEED)  # how matches were created before entropy
        async with SqliteStore(path) as store:
            record = MatchRecord(
                match_id="0123456789abcdef",
                created_at="2026-11-01T00:00:00.000Z",
                game="triathlon",
                players=3,
                config=json.dumps(
                    {"game": "triathlon", "players": 3, "options": dict(prepared.options)},
                    sort_keys=True,
                ).encode(),
                seed=SEED,
                commitment=dealt_at_once.log[0].commitment,  # type: ignore[union-attr]
                status="running",
                ended_at=None,
            )
            await store.create_match(record)
            opening = [
                codec.event_to_pb(e, i + 1, record.match_id).SerializeToString()
                for i, e in enumerate(dealt_at_once.log)
            ]
            await store.append(record.match_id, opening, expected_seq=0)
            last = len(opening)
            for seat in range(2):  # two of three seats joined before the upgrade
                joined = pb.Event(seq=last + 1, seat_joined=pb.SeatJoined(seat=seat, name="x"))
                await store.append(
                    record.match_id,
                    [joined.SerializeToString()],
                    expected_seq=last,
                    join=SeatRecord(record.match_id, seat, token_hash(f"t{seat}" * 20), "x"),
                )
                last += 1
        async with SqliteStore(path) as store:
            arena = Arena(store)
            assert await arena.resume_unfinished() == 1
            hosted = await arena.get(record.match_id)
            assert hosted.engine.dealing and hosted.engine.hands == dealt_at_once.hands
            await hosted.join(2, "y")
            kinds = [
                pb.Event.FromString(s.payload).WhichOneof("kind")
                for s in await store.read_events(record.match_id)
            ]
            assert kinds.count("dealt") == 1  # the join dealt nothing again
            assert hosted.running and hosted.engine.to_act == dealt_at_once.to_act
            actor = hosted.engine.to_act
            assert actor is not None
            action = hosted.engine.legal_actions()[0]
            await hosted.submit(actor, action, hosted.last_seq, "")
            dealt_at_once.apply(actor, action)
            assert hosted.engine.hands == dealt_at_once.hands

    asyncio.run(asyncio.wait_for(scenario(), 30))
