"""A restart with one match log that cannot be replayed (bytes that do not decode, an action
the rules refuse, a configuration that no longer validates) still resumes every other
unfinished match, and the server still starts: one bad log must cost that match alone. Asked
for later, that match is DATA_LOSS, named, without a word of its log (an engine's refusal can
name a card).

Before, the first such log raised out of ``Arena.load_unfinished`` (and so out of
``Server.start``): the server did not start at all."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

import grpc
import pytest

from cardarena.server.api.status import status_for
from cardarena.server.errors import Unreplayable
from cardarena.server.hosting import Arena
from cardarena.server.store import SqliteStore
from cardarena.v1 import game_pb2 as pb

MATCHES = 3
BAD = 1
"""Which of the matches (in creation order) gets the bad log."""


async def played_matches(path: Path) -> list[str]:
    """Three Hexathlons, each dealt and a few cards into its first trick round."""
    ids = []
    async with SqliteStore(path) as store:
        arena = Arena(store)
        for _ in range(MATCHES):
            hosted = await arena.create("hexathlon", 4, None)
            for seat in range(4):
                await hosted.join(seat, f"p{seat}", contribution=bytes([seat]) * 32)
            for _ in range(6):
                to_act = hosted.engine.to_act
                assert to_act is not None
                await hosted.submit(to_act, hosted.engine.legal_actions()[0], hosted.last_seq, "")
            ids.append(hosted.match_id)
        await arena.shutdown()
    return ids


async def spoil(path: Path, match_id: str, how: str) -> None:
    if how == "config":  # an option this version no longer knows
        config = {"game": "hexathlon", "players": 4, "options": {"no_such_option": 1}}
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE matches SET config = ? WHERE match_id = ?",
                (json.dumps(config).encode(), match_id),
            )
        return
    if how == "payload":  # the last entry's bytes no longer decode
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE events SET payload = ? WHERE match_id = ? AND seq ="
                " (SELECT max(seq) FROM events WHERE match_id = ?)",
                (b"\xff\xff\xff", match_id, match_id),
            )
        return
    # "illegal": a card played a second time, appended as the store appends anything
    async with SqliteStore(path) as store:
        stored = await store.read_events(match_id)
        entries = [pb.Event.FromString(item.payload) for item in stored]
        played = [e for e in entries if e.WhichOneof("kind") == "card_played"]
        again = pb.Event()
        again.CopyFrom(played[0])
        again.seq = stored[-1].seq + 1
        await store.append(match_id, [again.SerializeToString()], expected_seq=stored[-1].seq)


@pytest.mark.parametrize("how", ["payload", "illegal", "config"])
def test_one_unreplayable_log_leaves_the_others_resumed(tmp_path: Path, how: str) -> None:
    async def main() -> None:
        path = tmp_path / "store.db"
        ids = await played_matches(path)
        await spoil(path, ids[BAD], how)
        async with SqliteStore(path) as store:
            arena = Arena(store)
            resumed = await arena.resume_unfinished()
            good = [match_id for i, match_id in enumerate(ids) if i != BAD]
            assert resumed == len(good)
            for match_id in good:
                hosted = arena.matches[match_id]
                assert hosted.running and hosted.engine.to_act is not None
            with pytest.raises(Unreplayable) as refused:
                await arena.get(ids[BAD])
            assert status_for(refused.value) == grpc.StatusCode.DATA_LOSS
            assert ids[BAD] in str(refused.value)
            assert not re.search(r"\b(10|[2-9JQKA])[CDHS]\b", str(refused.value))
            await arena.shutdown()

    asyncio.run(asyncio.wait_for(main(), 60))
