"""The tournament's parts without a server: bot specs, line protocol, guard, progress.

The schedule moved to cardarena.competition with its tests (tests/competition/test_schedule.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import sys
from pathlib import Path

import pytest

from cardarena.clients.bots import SeatState
from cardarena.clients.bots.decider import PythonDecider, SeatContext
from cardarena.clients.bots.external import ExternalDecider
from cardarena.clients.bots.external.protocol import event_message, parse_answer, turn_message
from cardarena.clients.tournament import check_unique, make_python_bot, parse_bot
from cardarena.clients.tournament.guard import GuardedSeat
from cardarena.clients.tournament.progress import Progress
from cardarena.engine import PASS, CardSet, parse_card
from cardarena.engine import events as ev

from ..tournament_bots import Crasher, IllegalMover, Sleeper

CONTEXT = SeatContext("m1", "hexathlon", 0, 3, ("x", "y", "z"), {}, True, 200)


def test_bot_specs() -> None:
    assert parse_bot("random").name == "random"
    assert parse_bot("pkg.mod:Clever").name == "Clever"
    mc = parse_bot("mc50=mc,budget_ms=50,policy=random,verbose=true")
    assert (mc.name, mc.target) == ("mc50", "mc")
    assert mc.params == {"budget_ms": 50, "policy": "random", "verbose": True}
    ext = parse_bot("exec:js=node bot.js --level 'very hard'")
    assert (ext.kind, ext.command) == ("exec", ("node", "bot.js", "--level", "very hard"))
    for bad in ("exec:nocommand", "exec:=node x", "bad name=random", "mc,budget_ms"):
        with pytest.raises(ValueError):
            parse_bot(bad)
    with pytest.raises(ValueError, match="two bots are named"):
        check_unique([parse_bot("random"), parse_bot("random")])
    with pytest.raises(ValueError, match="cannot load"):
        make_python_bot(parse_bot("no.such.module:Bot"), seed=1)


def test_answers_are_read_against_the_legal_actions() -> None:
    legal = [parse_card("QC"), parse_card("10H"), PASS]
    assert parse_answer(b'{"action": "qc"}\n', legal) == parse_card("QC")
    assert parse_answer(b'{"action": "pass"}', legal) == PASS
    for bad in (b"QC", b'{"move": "QC"}', b'{"action": "AS"}', b"[1]"):
        with pytest.raises(ValueError):
            parse_answer(bad, legal)


def test_events_are_readable_with_card_codes() -> None:
    dealt = ev.Dealt(0, (CardSet.parse("QC 10H"), None), (2, 2))
    assert event_message(3, dealt) == {
        "type": "event",
        "seq": 3,
        "event": "dealt",
        "round": 0,
        "hands": [["QC", "10H"], None],
        "hand_sizes": [2, 2],
    }
    assert event_message(4, ev.TrumpDrawn(1, 2))["suit"] == "H"
    trick = event_message(9, ev.TrickWon(0, 1, (parse_card("2C"), parse_card("AC")), 0))
    assert trick["cards"] == ["2C", "AC"]


def test_a_turn_says_how_long_the_move_has_left() -> None:
    state = state_to_act()
    state.deadline_unix_ms = 1_796_140_810_000
    told = turn_message(state, now_unix_ms=1_796_140_800_019, prompt=1)
    assert (told["deadline_unix_ms"], told["remaining_ms"]) == (1_796_140_810_000, 9_981)
    assert turn_message(state, now_unix_ms=1_796_140_810_500, prompt=2)["remaining_ms"] == 0
    state.deadline_unix_ms = 0  # no clock on the move
    told = turn_message(state, now_unix_ms=1_796_140_800_019, prompt=3)
    assert (told["deadline_unix_ms"], told["remaining_ms"]) == (0, None)
    assert told["legal"] == ["2C", "AC"] and told["seq"] == state.seq and told["id"] == 3
    assert (told["bank_ms"], told["round_ms"]) == (None, None)  # no bank, no round budget


def state_to_act(*legal: int) -> SeatState:
    state = SeatState("m1", 0)
    state.legal = list(legal) or [parse_card("2C"), parse_card("AC")]
    return state


def test_the_guard_counts_crashes_and_illegal_moves_and_keeps_asking() -> None:
    async def scenario() -> None:
        crasher = GuardedSeat(PythonDecider(Crasher), timeout_s=1)
        illegal = GuardedSeat(PythonDecider(IllegalMover), timeout_s=1)
        await crasher.start(CONTEXT)
        await illegal.start(CONTEXT)
        crashed = [await crasher.decide(state_to_act()) for _ in range(6)]
        illegal_moves = [await illegal.decide(state_to_act()) for _ in range(4)]
        assert crashed == [parse_card("AC"), parse_card("AC"), parse_card("2C")] * 2
        assert (crasher.faults.crashes, crasher.faults.fallbacks, crasher.benched) == (2, 2, False)
        assert illegal_moves == [parse_card("2C")] * 4
        assert (illegal.faults.illegal, illegal.faults.fallbacks) == (2, 2)

    asyncio.run(scenario())


def test_the_guards_fallback_is_the_servers_default_the_pass_where_it_is_legal() -> None:
    """In a voluntary-pass Fan Tan the runner's fallback passes for a seat that could play, as
    the server's clock does (``engine.default_action``), rather than play its lowest card."""

    async def scenario() -> None:
        illegal = GuardedSeat(PythonDecider(IllegalMover), timeout_s=1)
        await illegal.start(CONTEXT)
        voluntary = state_to_act(parse_card("2C"), parse_card("AC"), PASS)
        assert await illegal.decide(voluntary) == PASS
        assert await illegal.decide(voluntary) == parse_card("2C"), "its own answer"
        assert await illegal.decide(state_to_act()) == parse_card("2C"), "no pass: lowest card"
        assert (illegal.faults.illegal, illegal.faults.fallbacks) == (2, 2)

    asyncio.run(scenario())


class RaisesCancelled:
    """A bot that calls ``result()`` on a cancelled future of a pool of its own."""

    name = "cancelled"

    def choose(self, state: SeatState) -> int:
        raise concurrent.futures.CancelledError


class Exits:
    name = "exits"

    def choose(self, state: SeatState) -> int:
        raise SystemExit(3)


@pytest.mark.parametrize("bot", [RaisesCancelled, Exits])
def test_what_a_bot_raises_is_its_crash_never_the_runners_cancellation(bot: type) -> None:
    async def scenario() -> None:
        seat = GuardedSeat(PythonDecider(bot), timeout_s=5)
        await seat.start(CONTEXT)
        move = await seat.decide(state_to_act())
        assert move in state_to_act().legal
        assert (seat.faults.crashes, seat.faults.fallbacks) == (1, 1)

    asyncio.run(scenario())


def test_a_hung_python_bot_is_benched_without_blocking_the_loop() -> None:
    async def scenario() -> None:
        seat = GuardedSeat(PythonDecider(Sleeper), timeout_s=0.2)
        await seat.start(CONTEXT)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        moves = [await seat.decide(state_to_act()) for _ in range(4)]
        task.cancel()
        assert ticks > 5  # the loop kept running while the bot hung
        assert moves == [parse_card("2C")] * 4
        assert seat.benched and seat.faults.timeouts == 1 and seat.faults.fallbacks == 3

    asyncio.run(scenario())


PROGRAM = """
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        if mode == "exit":
            sys.exit(3)
        answer = {"action": message["legal"][-1]} if mode == "good" else "nonsense"
        print(json.dumps(answer), flush=True)
    elif message["type"] == "end":
        print(json.dumps(message), file=sys.stderr)
"""


@pytest.mark.parametrize("mode", ["good", "junk", "exit"])
def test_an_external_program_is_a_bot(tmp_path: Path, mode: str) -> None:
    script = tmp_path / "bot.py"
    script.write_text(PROGRAM)
    log = tmp_path / "logs" / "bot.log"

    async def scenario() -> GuardedSeat:
        decider = ExternalDecider([sys.executable, str(script), mode], stderr_path=log)
        seat = GuardedSeat(decider, timeout_s=5)
        await seat.start(CONTEXT)
        moves = [await seat.decide(state_to_act()) for _ in range(2)]
        final = state_to_act()
        final.totals, final.winners = [1, 2, 3], (0,)
        await seat.finish(final)
        assert moves == ([parse_card("AC")] * 2 if mode == "good" else [parse_card("2C")] * 2)
        return seat

    seat = asyncio.run(scenario())
    faults = seat.faults
    if mode == "good":
        assert faults.total == 0
        assert '"won": true' in log.read_text()
    elif mode == "junk":
        assert (faults.illegal, faults.fallbacks, seat.benched) == (2, 2, False)
    else:
        assert (faults.crashes, faults.fallbacks, seat.benched) == (1, 2, True)
        assert "exit code 3" in faults.notes[0]


def test_a_program_that_cannot_start_is_a_crash_at_start() -> None:
    async def scenario() -> GuardedSeat:
        seat = GuardedSeat(ExternalDecider(["/nonexistent/bot"]), timeout_s=1)
        await seat.start(CONTEXT)
        assert await seat.decide(state_to_act()) == parse_card("2C")
        await seat.finish(state_to_act())
        return seat

    seat = asyncio.run(scenario())
    assert seat.benched and seat.faults.crashes == 1
    assert "cannot start" in seat.faults.notes[0]


def test_progress_draws_only_when_enabled() -> None:
    shown, hidden = io.StringIO(), io.StringIO()
    bar = Progress(4, label="hexathlon", enabled=True, stream=shown)
    quiet = Progress(4, enabled=None, stream=hidden)  # a StringIO is not a terminal
    for _ in range(4):
        bar.advance(faults=1)
        quiet.advance()
    bar.close()
    quiet.close()
    assert "hexathlon [" in shown.getvalue() and "4/4" in shown.getvalue()
    assert "faults 4" in shown.getvalue() and shown.getvalue().endswith("\n")
    assert hidden.getvalue() == ""
