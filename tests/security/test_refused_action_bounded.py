"""A tournament entrant's malformed action is logged as its fault, and once the log kept it
as sent: a card whose informative ``code`` was nearly the whole 256 KiB message (or fields this
server does not know) became a quarter-megabyte event per fault in a log every reader fetches
and the server signs; 25 of them put a match's log past a default client's 4 MB. The log now
keeps the action's kind and numbers and at most eight characters of its code."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cardarena.server.hosting.faults import CODE_KEPT, as_recorded
from cardarena.v1 import game_pb2 as pb

from ..arenas import seated_on_sqlite

UNKNOWN_FIELD_99 = b"\x9a\x06" + b"\x80\x80\x04" + b"x" * 65536  # field 99, 64 KiB of bytes


def passed() -> pb.Action:
    action = pb.Action()
    getattr(action, "pass").SetInParent()  # `pass` is a Python keyword
    return action


def bloated() -> pb.Action:
    action = pb.Action(play=pb.Card(suit=pb.SUIT_HEARTS, rank=99, code="Z" * 100_000))
    action.MergeFromString(UNKNOWN_FIELD_99)
    return action


def test_a_malformed_action_is_logged_small_whatever_its_size(tmp_path: Path) -> None:
    async def main() -> None:
        async with seated_on_sqlite(tmp_path / "store.db", tournament_id="t1") as (store, hosted):
            seat = hosted.engine.to_act
            assert seat is not None
            before = hosted.last_seq
            sent = bloated()
            assert sent.ByteSize() > 160_000
            await hosted.refuse_malformed(seat, sent, before, "action: no card has rank 99")
            logged = await store.read_events(hosted.match_id, after_seq=before)
            assert len(logged) == 1 and len(logged[0].payload) < 200
            fault = pb.Event.FromString(logged[0].payload).seat_faulted
            assert fault.kind == pb.FAULT_KIND_REFUSED_ACTION and fault.seat == seat
            assert fault.action == pb.Action(
                play=pb.Card(suit=pb.SUIT_HEARTS, rank=99, code="Z" * CODE_KEPT)
            )

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.parametrize(
    "action",
    [
        pb.Action(play=pb.Card(suit=pb.SUIT_CLUBS, rank=12, code="QC")),
        passed(),
        pb.Action(exclude_suit=pb.SUIT_SPADES),
        pb.Action(choose_trump=pb.SUIT_DIAMONDS),
        pb.Action(choose_trump=pb.Suit.ValueType(12345)),  # no suit: kept as it was
        pb.Action(),
    ],
)
def test_what_the_log_keeps_of_a_small_action_is_the_action(action: pb.Action) -> None:
    assert as_recorded(action) == action
    grown = pb.Action()
    grown.CopyFrom(action)
    grown.MergeFromString(UNKNOWN_FIELD_99)
    assert as_recorded(grown).SerializeToString() == action.SerializeToString()
