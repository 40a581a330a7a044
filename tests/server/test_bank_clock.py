"""Banks and round budgets (issue 30.2): a seat's turn lasts the least of its clocks, the time
it takes is written on its action and taken from its bank (plus the increment), a seat that
spends its bank times out and no other seat is charged; a restart folds the same banks from
the log; the auditor agrees with every time-out and refuses one that was not due. The match's
clock keeps a time the test moves (:class:`SteppedTime`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cardarena.clients.audit import audit_log
from cardarena.clients.audit.checks import _check_due
from cardarena.clients.audit.errors import Discrepancy
from cardarena.server.api.info import match_info
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.hosting.clock import MoveClock
from cardarena.server.store import SqliteStore
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import SeatClocks, TimeControl
from tests.arenas import act, seat_everyone

from .stepped_time import SteppedTime

BANK = TimeControl(bank_ms=3000, increment_ms=100)


async def clocked(
    store: SqliteStore, control: TimeControl, game: str = "triathlon"
) -> tuple[HostedMatch, SteppedTime]:
    hosted = await Arena(store).create(game, 3, None, control=control)
    stepped = SteppedTime()
    hosted.clock = MoveClock(control.move_ms, stepped)
    await seat_everyone(hosted)
    hosted._rearm_clock()
    await asyncio.sleep(0)  # the timer's task starts sleeping on the stepped time
    return hosted, stepped


async def entries(store: SqliteStore, hosted: HostedMatch) -> list[pb.Event]:
    return [pb.Event.FromString(e.payload) for e in await store.read_events(hosted.match_id)]


def test_a_bank_is_spent_by_thinking_and_refilled_by_the_increment(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted, stepped = await clocked(store, BANK)
            first = hosted.engine.to_act
            assert first is not None
            assert hosted.clock.deadline == stepped.now() + 3.0
            assert hosted.your_turn().bank_ms == 3000
            await stepped.advance(1.0)
            await act(hosted)
            log = await entries(store, hosted)
            charged = [(e.WhichOneof("kind"), e.think_ms) for e in log if e.HasField("think_ms")]
            assert charged == [("suit_excluded", 1000)]
            assert hosted.banks.bank[first] == 3000 - 1000 + 100
            second = hosted.engine.to_act
            assert second is not None and hosted.your_turn().bank_ms == 3000
            hosted.clock.stop()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_seat_that_spends_its_bank_times_out_and_nobody_else_is_charged(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            hosted, stepped = await clocked(store, BANK)
            slow = hosted.engine.to_act
            assert slow is not None
            await stepped.advance(3.0)  # its whole bank on one decision
            log = await entries(store, hosted)
            timed = [e for e in log if e.WhichOneof("kind") == "timed_out"]
            assert [(e.timed_out.seat, e.think_ms) for e in timed] == [(slow, 3000)]
            assert hosted.banks.bank[slow] == 0 and hosted.faults.counts[slow] == 1
            others = [s for s in range(3) if s != slow]
            assert all(hosted.banks.bank[s] == 3000 for s in others)
            assert all(hosted.faults.counts[s] == 0 for s in others)
            # Its next turns have nothing left: each times out at once, and only it.
            while hosted.running:
                if hosted.engine.to_act == slow:
                    await asyncio.sleep(0)
                    await stepped.advance(0.0)
                else:
                    await act(hosted)
            assert hosted.faults.counts[slow] >= 2
            assert all(hosted.faults.counts[s] == 0 for s in others)
            report = audit_log(await logged(hosted))
            assert report.ok, report.failure

    asyncio.run(asyncio.wait_for(main(), 30))


async def logged(hosted: HostedMatch) -> spb.GetMatchLogResponse:
    """What GetMatchLog answers for the ended match."""
    stored = await hosted.read_log()
    return spb.GetMatchLogResponse(
        match=match_info(hosted),
        entries=[spb.LogEntry(seq=s.seq, event=s.payload, hash=s.hash) for s in stored],
        seed=hosted.record.seed,
    )


def test_a_round_budget_is_renewed_each_round(tmp_path: Path) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "store.db") as store:
            # Pentathlon: its rounds are fixed, so a second one always comes (a Triathlon may
            # end after its first deal, with one player's three feats, and renew nothing).
            hosted, stepped = await clocked(store, TimeControl(round_ms=5000), "pentathlon")
            seat = hosted.engine.to_act
            assert seat is not None
            await stepped.advance(2.0)
            await act(hosted)
            assert hosted.banks.round[seat] == 3000
            round_now = hosted.engine.round_index
            while hosted.engine.round_index == round_now:
                assert hosted.running, "the match ended in its first round"
                await act(hosted)
            assert hosted.banks.round == [5000, 5000, 5000]
            hosted.clock.stop()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_restart_folds_the_same_banks_from_the_log(tmp_path: Path) -> None:
    path = tmp_path / "store.db"

    async def main() -> list[list[int]]:
        async with SqliteStore(path) as store:
            hosted, stepped = await clocked(store, BANK)
            for think in (0.5, 1.25, 0.1):
                await stepped.advance(think)
                await act(hosted)
            before = list(hosted.banks.bank)
            hosted.clock.stop()
        async with SqliteStore(path) as store:
            arena = Arena(store)
            assert await arena.resume_unfinished() == 1
            (resumed,) = arena.matches.values()
            after = list(resumed.banks.bank)
            await arena.shutdown()
        return [before, after]

    before, after = asyncio.run(asyncio.wait_for(main(), 30))
    assert before == after and before != [3000, 3000, 3000]


def test_the_auditor_refuses_a_time_out_that_was_not_due() -> None:
    clocks = SeatClocks(BANK, 3)
    clocks.fold(pb.Event(seq=5, think_ms=1000, card_played=pb.CardPlayed(seat=1)))
    assert clocks.bank[1] == 2100
    due = pb.Event(seq=9, think_ms=2100, timed_out=pb.TimedOut(seat=1))
    _check_due(9, due, clocks)  # the whole bank: due
    early = pb.Event(seq=9, think_ms=2000, timed_out=pb.TimedOut(seat=1))
    with pytest.raises(Discrepancy, match="timed out after 2000 ms, but its clocks allowed 2100"):
        _check_due(9, early, clocks)
    uncharged = pb.Event(seq=9, timed_out=pb.TimedOut(seat=1))
    with pytest.raises(Discrepancy, match="no time charged"):
        _check_due(9, uncharged, clocks)
