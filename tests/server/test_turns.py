"""Whose turn it is, told to every reader (``Turn``): after each write that starts a move and
whenever it changes otherwise, the same for every kind of reader; a fault tells nothing new; a
follower replica tells its readers its estimate, and a new owner the deadline it sets on taking
over."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from cardarena.engine import ActionError
from cardarena.server.hosting import Arena, HostedMatch, Told
from cardarena.server.hosting.clock import MoveClock
from cardarena.server.store import SqliteStore
from cardarena.v1 import game_pb2 as pb
from tests.arenas import LAPSED, act, seat_everyone, seated_on_sqlite, with_two_arenas
from tests.helpers import drain
from tests.waiting import eventually

MOVE_MS = 60_000


def turns(items: list[Any]) -> list[pb.Turn]:
    return [item for item in items if isinstance(item, pb.Turn)]


def told(hosted: HostedMatch) -> tuple[int | None, int, int]:
    """What a Turn must say now: the snapshot's to_act and deadline, at the last seq."""
    snap = hosted.snapshot(None)
    return (snap.to_act if snap.HasField("to_act") else None, snap.deadline_unix_ms, snap.seq)


def said(turn: pb.Turn) -> tuple[int | None, int, int]:
    return (turn.seat if turn.HasField("seat") else None, turn.deadline_unix_ms, turn.seq)


def test_every_write_that_starts_a_turn_tells_every_reader(tmp_path: Path) -> None:
    """Crazy Sixes on a clock, to the end: after each action's events one Turn (the same seat
    again too, when the others could not play), the same for a spectator and for each seat,
    saying what a fresh snapshot says; a seat's YourTurn comes after it; the last one says
    nobody is to act."""

    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("crazy_sixes", 3, {}, move_ms=MOVE_MS)
            readers = [hosted.readers.subscribe(seat) for seat in (None, 0, 1, 2)]
            streams: list[list[Any]] = [[] for _ in readers]
            await seat_everyone(hosted)
            expected = [told(hosted)]
            hands = 1
            while not hosted.ended:
                round_before = hosted.engine.round_index
                await act(hosted)
                hands += hosted.engine.round_index != round_before
                expected.append(told(hosted))
                for sub, seen in zip(readers, streams, strict=True):
                    seen.extend(drain(sub.queue))  # as it goes: a match overflows a queue
            assert hands > 1, "the match must change hands"
            assert expected[-1] == (None, 0, hosted.last_seq)
            spectator = turns(streams[0])
            assert [said(t) for t in spectator] == expected
            for seat, items in enumerate(streams[1:]):
                assert turns(items) == spectator, f"seat {seat} is told another turn"
                for at, item in enumerate(items):
                    if isinstance(item, pb.Turn):  # after the events up to its seq
                        before = [i for i in items[:at] if isinstance(i, pb.Event)]
                        assert not before or before[-1].seq == item.seq
                    if isinstance(item, pb.YourTurn):
                        assert isinstance(items[at - 1], pb.Turn), "YourTurn after the Turn"
                        assert said(items[at - 1]) == (seat, item.deadline_unix_ms, item.seq)

    asyncio.run(main())


def test_without_a_clock_every_move_is_told_and_the_joins_are_not(tmp_path: Path) -> None:
    """No deadline: still a Turn after every move (the deal's first too), none for the joins
    before it (nobody is to act, as before)."""

    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("pentathlon", 4, {"rounds": ["fan_tan"]})
            spectator = hosted.readers.subscribe(None)
            await seat_everyone(hosted)
            moves = [told(hosted)]
            while not hosted.ended:
                await act(hosted)
                moves.append(told(hosted))
            got = [said(t) for t in turns(drain(spectator.queue))]
            assert got == moves
            assert all(deadline == 0 for _, deadline, _ in got)

    asyncio.run(main())


def test_a_fault_restarts_no_clock_and_tells_no_turn(tmp_path: Path) -> None:
    async def main() -> None:
        async with seated_on_sqlite(
            tmp_path / "store.db", options={}, move_ms=MOVE_MS, tournament_id="t1", forfeit_after=3
        ) as (_store, hosted):
            spectator = hosted.readers.subscribe(None)
            seat = hosted.engine.to_act
            assert seat is not None
            wrong = next(a for a in range(64) if a not in hosted.engine.legal_actions())
            with contextlib.suppress(ActionError):
                await hosted.submit(seat, wrong, hosted.last_seq, "")
            items = drain(spectator.queue)
            assert [i.WhichOneof("kind") for i in items if isinstance(i, pb.Event)] == [
                "seat_faulted"
            ]
            assert turns(items) == [], "the seat's clock runs on: nothing new to tell"

    asyncio.run(main())


def test_a_cancelled_match_tells_that_nobody_is_to_act(tmp_path: Path) -> None:
    async def main() -> None:
        seated = seated_on_sqlite(tmp_path / "store.db", options={}, move_ms=MOVE_MS)
        async with seated as (_store, hosted):
            spectator = hosted.readers.subscribe(None)
            await hosted.cancel("enough")
            items = drain(spectator.queue)
            assert [said(t) for t in turns(items)] == [(None, 0, hosted.last_seq)]
            assert items[-1] == turns(items)[0], "after the cancellation and the reveal"

    asyncio.run(main())


def test_a_follower_estimates_until_faults_alone() -> None:
    """A follower's estimate is a full move from when it read a new turn; a batch of faults
    alone (the owner's clock runs on) leaves it standing."""
    clock = MoveClock(MOVE_MS)
    played = [pb.Event(seq=5, card_played=pb.CardPlayed(seat=1))]
    fault = [pb.Event(seq=6, seat_faulted=pb.SeatFaulted(seat=2))]
    forfeit = [*fault, pb.Event(seq=7, seat_forfeited=pb.SeatForfeited(seat=2))]
    clock.estimate(True, played)
    first = clock.deadline
    assert abs(first - (time.time() + MOVE_MS / 1000)) < 5
    clock.deadline -= 10  # as if read ten seconds ago
    clock.estimate(True, fault)
    assert clock.deadline == first - 10
    clock.estimate(True, forfeit)
    assert clock.deadline > first - 5
    clock.estimate(False, played)
    assert clock.deadline == 0


def test_a_follower_tells_its_estimate_and_a_new_owner_its_deadline() -> None:
    """On PostgreSQL, two replicas: the follower's readers get a Turn with its estimate after
    each catch-up; when it takes the match over, a Turn at the same seq with the deadline its
    own clock now keeps (a full move from the take-over)."""

    async def body(a: Arena, b: Arena) -> None:
        mine = await a.create("triathlon", 3, {}, move_ms=MOVE_MS)
        await seat_everyone(mine)
        followed = await b.get(mine.match_id)
        spectator = followed.readers.subscribe(None)
        seat = followed.readers.subscribe(1)
        await act(mine)
        await followed.catch_up()
        items = drain(spectator.queue)
        got = turns(items)
        assert [t.seq for t in got] == [mine.last_seq]
        assert got[0].seat == mine.engine.to_act
        assert abs(got[0].deadline_unix_ms - int(mine.clock.deadline * 1000)) < 2_000
        assert turns(drain(seat.queue)) == got
        # The take-over's full move must start at least a millisecond after the estimate's.
        await eventually(
            lambda: time.time() * 1000 + MOVE_MS >= got[0].deadline_unix_ms + 2,
            what="the clock to pass the estimate's millisecond",
        )
        await a.store.renew_leases(LAPSED)
        assert await b.writer_of(mine.match_id) is followed
        retold = turns(drain(spectator.queue))
        assert len(retold) == 1 and retold[0].seq == got[0].seq == followed.last_seq
        assert retold[0].seat == got[0].seat
        assert retold[0].deadline_unix_ms == int(followed.clock.deadline * 1000)
        assert retold[0].deadline_unix_ms > got[0].deadline_unix_ms
        assert turns(drain(seat.queue)) == retold

    with_two_arenas(body)


def test_a_turn_rides_on_the_last_event_of_its_write(tmp_path: Path) -> None:
    """A Turn costs no message of its own: it is queued with the last event of the write that
    started the move (one item, one message on the wire), never alone while events come."""

    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted = await Arena(store).create("triathlon", 3, {}, move_ms=MOVE_MS)
            spectator = hosted.readers.subscribe(None)
            first = hosted.last_seq + 1
            await seat_everyone(hosted)
            writes = 1  # the last join, which deals
            for _ in range(12):
                await act(hosted)
                writes += 1
            items = []
            while not spectator.queue.empty():
                items.append(spectator.queue.get_nowait())
            told = [item for item in items if isinstance(item, Told) and item.turn is not None]
            assert len(told) == writes
            assert not [item for item in items if isinstance(item, pb.Turn)]
            for item in told:
                assert item.turn is not None
                assert item.event is not None and item.event.seq == item.turn.seq
            events = [
                item.event for item in items if isinstance(item, Told) and item.event is not None
            ]
            assert sorted(e.seq for e in events) == list(range(first, hosted.last_seq + 1))

    asyncio.run(main())
