"""docs/bot-protocol.md, "Turn ids and late answers": every turn has an id its answer echoes,
and an answer to a turn given up on is dropped and counted as late, never taken for a later
turn's (as a tester saw: "no answer in time", then "'exclude:S' is not one of the legal
actions" for the next turn, then a forfeit).

The matches are played in-process (:func:`cardarena.clients.bots.play`), the program behind
:class:`Entrantlike`, which gives up on a turn as ``cardarena bot connect`` does (its own time
runs out, the turn is left to the server's clock) and asks the same program the next turn.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
from pathlib import Path

import pytest

from cardarena.clients.audit import audit_log
from cardarena.clients.bots import SeatState, play
from cardarena.clients.bots.decider import IllegalAnswer, SeatContext
from cardarena.clients.bots.external import PROTOCOL_VERSION, ExternalDecider
from cardarena.clients.bots.external.protocol import answer_id, start_message
from cardarena.clients.bots.local import Seat
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..tournament_bots import FirstLegal

ROOT = Path(__file__).resolve().parents[2]
SEED = bytes(range(32))
GAME = "pentathlon"
OPTIONS = {"rounds": ["queens"]}  # one round: a whole match of a few turns a seat
GIVE_UP_S = 0.2
"""How long :class:`Entrantlike` waits for each answer by default, far below the match's
clock (a bot that is to answer in time is given longer, so that a loaded machine does not
make it late)."""
NO_ANSWER = "no answer in time"

ONE_BEHIND = """\
import json, sys

# Answers each turn only once the next one (or the end) arrives: every answer is late.
echo = sys.argv[1] == "ids"
owed = None
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"hello": True}), flush=True)
    elif message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        if owed is not None:
            print(json.dumps(owed), flush=True)
        owed = {"action": message["legal"][-1]}
        if echo:
            owed["id"] = message["id"]
"""

STALE_THEN_RIGHT = """\
import json, sys

# Answers each turn on time, but first repeats its answer to the turn before.
last = None
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        if last is not None:
            print(json.dumps(last), flush=True)
        last = {"id": message["id"], "action": message["legal"][0]}
        print(json.dumps(last), flush=True)
"""

WRONG_ID = """\
import json, sys

wrong = {
    "next": lambda m: m["id"] + 1,
    "seq": lambda m: m["seq"],
    "text": lambda m: str(m["id"]),
    "zero": lambda m: 0,
}[sys.argv[1]]
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        answer = {"id": wrong(message), "action": message["legal"][0]}
        print(json.dumps(answer), flush=True)
"""

NO_IDS = """\
import json, sys

# Protocol 1: answers carry no id, one a turn, in order.
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"action": message["legal"][0]}), flush=True)
"""


class Entrantlike:
    """A program asked as ``cardarena bot connect`` asks it (``tournament/entrant.py``): each
    turn within its own time, which running out leaves the turn unanswered (here: no action,
    so the match's clock plays the default) while the program is asked again next turn."""

    def __init__(self, program: ExternalDecider, give_up_s: float = GIVE_UP_S) -> None:
        self.program = program
        self.give_up_s = give_up_s
        self.asked = 0
        self.given_up = 0

    async def start(self, context: SeatContext) -> None:
        await self.program.start(context)

    def observe(self, event: pb.Event) -> None:
        self.program.observe(event)

    async def decide(self, state: SeatState) -> int:
        self.asked += 1
        try:
            async with asyncio.timeout(self.give_up_s):
                return await self.program.decide(state)
        except TimeoutError:
            self.given_up += 1
            raise IllegalAnswer(NO_ANSWER) from None

    async def finish(self, state: SeatState) -> None:
        await self.program.finish(state)

    def abandon(self) -> None:
        self.program.abandon()


def program(tmp_path: Path, text: str, *args: str) -> ExternalDecider:
    script = tmp_path / "bot.py"
    script.write_text(text)
    return ExternalDecider([sys.executable, str(script), *args])


def play_seat0(seat0: Seat) -> tuple[spb.GetMatchLogResponse, list[str]]:
    """A whole match, ``seat0`` against two Python bots; the reason of each of its faults."""
    faults: list[str] = []

    def fault(seat: int, seq: int, why: str) -> None:
        assert seat == 0, why
        faults.append(why)

    resp = play(
        GAME,
        [seat0, FirstLegal(), "random"],
        seed=SEED,
        options=OPTIONS,
        move_ms=10_000,
        names=["seat0", "first", "random"],
        on_fault=fault,
    )
    assert audit_log(resp).ok
    return resp, faults


def seat0_plays(resp: spb.GetMatchLogResponse) -> list[str]:
    """Seat 0's actions in the log, a timed-out turn as ``timed_out``."""
    out: list[str] = []
    timed_out = False
    for entry in resp.entries:
        event = pb.Event.FromString(entry.event)
        kind = event.WhichOneof("kind")
        if kind == "timed_out" and event.timed_out.seat == 0:
            timed_out = True
        elif kind in {"card_played", "passed", "suit_excluded", "trump_chosen"}:
            if getattr(event, str(kind)).seat == 0:
                out.append("timed_out" if timed_out else str(kind))
            timed_out = False
    return out


def test_the_protocol_version_says_turns_have_ids() -> None:
    context = SeatContext("m1", GAME, 0, 3, ("a", "b", "c"), {}, True, 200)
    assert PROTOCOL_VERSION == start_message(context)["protocol"] == 3  # 2: ids; 3: hello


def test_an_answer_echoes_a_turn_id_or_none() -> None:
    assert answer_id(b'{"id": 7, "action": "QC"}\n') == 7
    for none in (b'{"action": "QC"}', b'{"id": null, "action": "QC"}', b"QC", b"[7]"):
        assert answer_id(none) is None
    for wrong in (b'{"id": "7"}', b'{"id": 0}', b'{"id": -2}', b'{"id": true}', b'{"id": 7.5}'):
        with pytest.raises(ValueError, match="is not a turn's id"):
            answer_id(wrong)


@pytest.mark.parametrize("mode", ["ids", "no ids"])
def test_answers_after_the_time_out_are_never_taken_for_a_later_turn(
    tmp_path: Path, mode: str
) -> None:
    """Every answer comes after its turn was given up on (with its id, or without one, which
    counts in order): each is dropped as late, each turn is played by the clock's default, and
    the match ends as usual."""
    decider = program(tmp_path, ONE_BEHIND, mode)
    seat0 = Entrantlike(decider)
    resp, faults = play_seat0(seat0)
    assert seat0.asked > 5 and seat0.given_up == seat0.asked
    assert faults == [f"the bot answered no action: {NO_ANSWER}"] * seat0.asked
    assert resp.match.seats[0].faults == seat0.asked
    assert seat0_plays(resp) == ["timed_out"] * seat0.asked  # no late answer was played
    # Turn k's answer is written when turn k + 1 comes (the last one's only at the end), and
    # read while turn k + 1, or under a heavy load k + 2, is asked.
    assert seat0.asked - 2 <= decider.late <= seat0.asked - 1
    assert all(re.fullmatch(r"late at seq \d+: .* dropped", n) for n in decider.late_notes)
    assert "an answer to turn 1 came while turn 2 was asked" in decider.late_notes[0]


def test_a_late_answer_is_passed_over_for_the_answer_to_the_turn_asked(tmp_path: Path) -> None:
    """A stale answer before the right one, every turn: dropped, and the right one played, so
    the program plays what the same bot in Python plays."""
    decider = program(tmp_path, STALE_THEN_RIGHT)
    seat0 = Entrantlike(decider, give_up_s=5)
    resp, faults = play_seat0(seat0)
    assert faults == [] and resp.match.seats[0].faults == 0
    assert decider.late == seat0.asked - 1 > 5
    python, _ = play_seat0(FirstLegal())
    assert [e.event for e in resp.entries[1:]] == [e.event for e in python.entries[1:]]


@pytest.mark.parametrize("mode", ["next", "seq", "text", "zero"])
def test_an_answer_with_a_wrong_id_is_refused_every_turn(tmp_path: Path, mode: str) -> None:
    """An id no turn had (a later one, the turn's seq, a string, 0) answers nothing: each such
    answer is a fault of its turn, never an action, and the program is asked the next turn."""
    decider = program(tmp_path, WRONG_ID, mode)
    resp, faults = play_seat0(decider)
    turns = len(seat0_plays(resp))
    assert turns > 5 and resp.match.seats[0].faults == turns == len(faults)
    assert seat0_plays(resp) == ["timed_out"] * turns
    assert all(re.search(r"is not (the|a) turn's id", why) for why in faults), faults[:2]
    assert decider.late == 0


def the_documented_python_bot() -> str:
    doc = (ROOT / "docs" / "bot-protocol.md").read_text()
    found = re.search(r"## A minimal bot in Python\n\n```python\n(.*?)```", doc, re.DOTALL)
    assert found is not None, "docs/bot-protocol.md has lost its minimal Python bot"
    return found.group(1)


def example_bots(tmp_path: Path) -> list[ExternalDecider]:
    bots = [program(tmp_path, the_documented_python_bot())]
    node = shutil.which("node")
    if node is not None:
        bots.append(ExternalDecider([node, str(ROOT / "clients/examples/first_legal_bot.js")]))
    return bots


def test_well_behaved_bots_play_a_whole_match(tmp_path: Path) -> None:
    """The documented Python bot, the Node.js example (where node is installed) and a
    protocol-1 bot without ids each play a whole match without a fault, as FirstLegal does."""
    python, _ = play_seat0(FirstLegal())
    bots = example_bots(tmp_path)
    (tmp_path / "v1").mkdir()
    bots.append(program(tmp_path / "v1", NO_IDS))
    for bot in bots:
        seat0 = Entrantlike(bot, give_up_s=5)
        resp, faults = play_seat0(seat0)
        assert faults == [] and resp.match.seats[0].faults == 0, bot.command
        assert seat0.asked > 5 and bot.late == 0
        assert [e.event for e in resp.entries[1:]] == [e.event for e in python.entries[1:]]
