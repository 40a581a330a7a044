"""docs/bot-protocol.md, "Start-up is not a move": a program is told ``hello`` as soon as it
runs and answers it once loaded; ``start`` is answered ``{"ready": true}`` within the start-up
allowance; no turn comes before. A tester saw 52 of one program's 72 faults be first moves
timed out while the program was still starting.

Here in-process (:func:`cardarena.clients.bots.play`, which deals only once every seat is
ready) and the parts that start programs ahead of their matches for ``cardarena bot connect``
(:class:`~cardarena.clients.bots.external.Ahead`); through a real server in
``tests/integration/test_external_startup.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from cardarena.clients.audit import audit_log
from cardarena.clients.bots import SeatState, play
from cardarena.clients.bots import local as local_play
from cardarena.clients.bots.decider import BotGone, SeatContext
from cardarena.clients.bots.external import Ahead, ExternalDecider, Program
from cardarena.clients.bots.external.protocol import hello_message, is_hello, is_ready
from cardarena.clients.tournament.entrant import EntrantReport

from ..tournament_bots import FirstLegal

GAME = "pentathlon"
OPTIONS = {"rounds": ["queens"]}  # one round: a whole match of a few turns a seat
SEED = bytes(range(32))
CONTEXT = SeatContext("m1", GAME, 0, 3, ("slow", "first", "random"), {}, True, 500)

SLOW_START = """\
import json, sys, time

# Start-up before the first line is read (an interpreter, imports, a model to load): argv[1]
# seconds. With argv[2] == "hello" it answers hello (protocol 3), else only start (1 and 2).
time.sleep(float(sys.argv[1]))
hello = sys.argv[2] == "hello"
for line in sys.stdin:
    message = json.loads(line)
    print(json.dumps(message), file=sys.stderr, flush=True)  # what it was sent, in order
    if message["type"] == "hello" and hello:
        print(json.dumps({"hello": True}), flush=True)
    elif message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"id": message["id"], "action": message["legal"][0]}), flush=True)
"""


def slow_start(tmp_path: Path) -> Path:
    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_START)
    return script


def command(script: Path, seconds: float, hello: bool) -> list[str]:
    return [sys.executable, str(script), str(seconds), "hello" if hello else "no"]


def test_hello_is_the_first_message_and_its_answer_is_not_ready() -> None:
    assert hello_message() == {"type": "hello", "protocol": 3}
    assert is_hello(b'{"hello": true}\n') and not is_hello(b'{"ready": true}\n')
    assert is_ready(b'{"ready": true}\n') and not is_ready(b'{"hello": true}\n')
    for neither in (b"hello", b"[]", b'{"hello": 1}', b'{"ready": "yes"}'):
        assert not is_hello(neither) and not is_ready(neither)


@pytest.mark.parametrize("hello", [True, False], ids=["protocol 3", "protocol 2"])
def test_a_program_slow_to_start_is_not_faulted_under_a_short_clock(
    tmp_path: Path, hello: bool
) -> None:
    """1 s of start-up before the program reads a line, 500 ms a move: the match is dealt
    once it is ready, so no move of its is timed out (with ``hello`` answered or not)."""
    log = tmp_path / "seat0.log"
    program = ExternalDecider(command(slow_start(tmp_path), 1.0, hello), stderr_path=log)
    faults: list[tuple[int, int, str]] = []
    resp = play(
        GAME,
        [program, FirstLegal(), "random"],
        seed=SEED,
        options=OPTIONS,
        move_ms=500,
        names=["slow", "first", "random"],
        on_fault=lambda seat, seq, why: faults.append((seat, seq, why)),
    )
    assert audit_log(resp).ok
    assert faults == [] and [s.faults for s in resp.match.seats] == [0, 0, 0]
    sent = [json.loads(line)["type"] for line in log.read_text().splitlines()]
    assert sent[:2] == ["hello", "start"] and "turn" in sent and sent[-1] == "end"


def test_a_program_never_ready_is_reported_and_plays_no_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program still starting when the allowance is up (1 s here) is let go, and every
    turn of its seat says why: the match goes on without it."""
    monkeypatch.setattr(local_play, "START_TIMEOUT_S", 1.0)
    program = ExternalDecider(command(slow_start(tmp_path), 3600, True))
    faults: list[str] = []
    resp = play(
        GAME,
        [program, FirstLegal(), "random"],
        seed=SEED,
        options=OPTIONS,
        move_ms=200,
        on_fault=lambda seat, seq, why: faults.append(why),
    )
    assert audit_log(resp).ok
    assert faults and resp.match.seats[0].faults == len(faults)
    assert set(faults) == {"did not start within 1 s; asked no more in this match"}


def test_a_program_started_ahead_answers_hello_then_ready(tmp_path: Path) -> None:
    """Started (and told ``hello``) before its match, the program has loaded by the time it
    is given one: ``start`` is answered at once, not after its second of start-up."""
    script = slow_start(tmp_path)

    async def scenario() -> tuple[bool, float]:
        program = await Program.launch(command(script, 1.0, True))
        try:
            assert await program.up(30) and program.said_hello
            decider = ExternalDecider(command(script, 1.0, True))
            decider.use(program)
            loop = asyncio.get_running_loop()
            began = loop.time()
            await decider.start(CONTEXT)
            return program.said_hello, loop.time() - began
        finally:
            program.kill()
            await program.close(0)

    said_hello, took = asyncio.run(scenario())
    assert said_hello and took < 0.9, took


def test_a_program_of_protocol_2_started_ahead_is_silent_until_start(tmp_path: Path) -> None:
    script = slow_start(tmp_path)

    async def scenario() -> None:
        program = await Program.launch(command(script, 0.0, False))
        try:
            assert not await program.up(0.5)  # it ignores hello, as it was told to
            decider = ExternalDecider(command(script, 0.0, False))
            decider.use(program)
            await decider.start(CONTEXT)  # its first line is start's ready
            assert not program.said_hello
        finally:
            program.kill()
            await program.close(0)

    asyncio.run(scenario())


def test_ahead_hands_the_oldest_running_program_and_starts_another(tmp_path: Path) -> None:
    script = slow_start(tmp_path)
    fast = command(script, 0.0, True)

    async def scenario() -> None:
        ahead = Ahead(fast, stderr_path=None, keep=2, limit=3)
        ahead.fill()
        warmth = await ahead.up(30)
        assert (warmth.programs, warmth.hello, warmth.silent, warmth.failures) == (2, 2, 0, ())
        other = ExternalDecider([*fast, "--other"])
        assert not ahead.hand(other)  # another command: it starts its own
        first = ExternalDecider(fast)
        assert ahead.hand(first) and ahead.limit == 2
        await first.start(CONTEXT)
        await ahead.up(30)  # one started in its place
        assert (await ahead.up(30)).programs == 2
        handed = [first]
        for _ in range(2):
            handed.append(ExternalDecider(fast))
            assert ahead.hand(handed[-1])
        assert ahead.limit == 0 and not ahead.hand(ExternalDecider(fast))  # none may come
        assert (await ahead.up(1)).programs == 0
        await ahead.close()
        for decider in handed:
            await decider.finish(SeatState("m1", 0))

    asyncio.run(scenario())


def test_ahead_reports_programs_that_cannot_start_or_stay_silent(tmp_path: Path) -> None:
    script = slow_start(tmp_path)

    async def scenario() -> None:
        missing = Ahead(["/no/such/program"], stderr_path=None, keep=1, limit=5)
        missing.fill()
        warmth = await missing.up(1)
        assert warmth.programs == 1 and "cannot start '/no/such/program'" in warmth.failures[0]
        await missing.close()
        silent = Ahead(command(script, 3600, True), stderr_path=None, keep=2, limit=5)
        silent.fill()
        warmth = await silent.up(0.5)
        assert (warmth.programs, warmth.hello, warmth.silent) == (2, 0, 2)
        spares = list(silent._spares)
        await silent.close()  # never sent start: killed
        assert all(p.process.returncode is not None for p in spares)

    asyncio.run(scenario())


def test_a_program_that_exits_before_its_match_says_so_at_start(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(4)\n")

    async def scenario() -> None:
        decider = ExternalDecider([sys.executable, str(script)])
        with pytest.raises(BotGone, match=r"exit code 4"):
            await decider.start(CONTEXT)
        decider.abandon()

    asyncio.run(scenario())


def test_the_entrant_report_ends_with_its_late_answers() -> None:
    report = EntrantReport(entrant="slow", matches=3, failures=2)
    assert report.summary() == ["entrant slow: 3 matches played, 2 failures of the bot"]
    report.notes.append("match m1 seat 0: no answer in time")
    report.late = 4
    report.late_notes.append("match m1 seat 0: late at seq 9: an answer to turn 1 came …")
    assert report.summary() == [
        "entrant slow: 3 matches played, 2 failures of the bot, 4 late answers dropped",
        "  match m1 seat 0: no answer in time",
        "  match m1 seat 0: late at seq 9: an answer to turn 1 came …",
    ]
