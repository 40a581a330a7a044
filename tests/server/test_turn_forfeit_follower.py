"""On two replicas, the Turn after a forfeit: the owner arms no move for a seat that forfeited
(the server plays it at once, deadline now), so a follower's readers must not be told a full
move for it. ``MoveClock.estimate`` once restarted a full move after any entry but a fault, a
``SeatForfeited`` too: the follower's spectators were told the forfeited seat had a minute
while the owner's were told it had none (and with no clock at all, 0 where the owner's said
now)."""

from __future__ import annotations

from typing import Any

import pytest

from cardarena.engine import ActionError
from cardarena.server.hosting import Arena
from cardarena.server.hosting.mailbox import Mailbox
from cardarena.v1 import game_pb2 as pb
from tests.arenas import with_two_arenas
from tests.helpers import drain

MOVE_MS = 60_000


def last_turn(queue: Mailbox[Any]) -> pb.Turn:
    items = drain(queue)
    turns = [item for item in items if isinstance(item, pb.Turn)]
    assert turns, f"no Turn among {items}"
    return turns[-1]


def test_a_followers_turn_after_a_forfeit_says_what_the_owners_says() -> None:
    async def body(a: Arena, b: Arena) -> None:
        mine = await a.create(
            "triathlon", 3, {}, move_ms=MOVE_MS, forfeit_after=1, tournament_id="t1"
        )
        for seat in range(3):
            await mine.join(seat, f"entrant{seat}")
        followed = await b.get(mine.match_id)
        here = mine.readers.subscribe(None)
        there = followed.readers.subscribe(None)

        async def hold(turn: int) -> None:  # the owner plays the forfeited seat "at once":
            return  # held here, so both replicas can be read at that moment

        mine._expire = hold  # type: ignore[method-assign]
        to_act = mine.engine.to_act
        assert to_act is not None
        illegal = next(a for a in range(200) if a not in mine.engine.legal_actions())
        with pytest.raises(ActionError):
            await mine.submit(to_act, illegal, mine.last_seq, "")
        assert mine.faults.forfeited[to_act] and mine.engine.to_act == to_act
        owners = last_turn(here.queue)
        await followed.catch_up()
        followers = last_turn(there.queue)
        now = (mine.last_seq, to_act)
        assert (followers.seq, followers.seat) == (owners.seq, owners.seat) == now
        # The owner: no time at all. The follower: a little later at most, not a whole move.
        assert abs(followers.deadline_unix_ms - owners.deadline_unix_ms) < 2_000, (
            f"owner {owners.deadline_unix_ms}, follower {followers.deadline_unix_ms}"
        )
        mine.clock.stop()

    with_two_arenas(body)
