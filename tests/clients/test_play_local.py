"""Serverless play (``cardarena.clients.bots.play``): the log a server would write, entry for
entry; the same seed and bots give the same bytes; failing bots are played as a server's
clock plays them, and the log still audits."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from cardarena.clients import audit_log, play
from cardarena.clients.bots import RandomBot, SeatState, play_async
from cardarena.clients.bots.decider import IllegalAnswer
from cardarena.clients.bots.external import ExternalDecider
from cardarena.engine import GAMES, replay
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..logs import log_from_engine
from ..tournament_bots import Crasher, FirstLegal, IllegalMover, Sleeper

GAME_PLAYERS = [(game, n) for game, spec in GAMES.items() for n in spec.players]
SEED = bytes(range(32))

FIRST_LEGAL_PROGRAM = """\
import json, sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"ready": True}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"action": message["legal"][0]}), flush=True)
"""


def kinds(resp: spb.GetMatchLogResponse) -> list[str]:
    return [str(pb.Event.FromString(e.event).WhichOneof("kind")) for e in resp.entries]


def same_as_served(resp: spb.GetMatchLogResponse) -> None:
    """Every entry is the server's: the same event, in the same bytes but MatchStarted's (a
    Struct's map has no fixed byte order; a local log encodes it deterministically, which the
    auditor takes like any order), so MatchInfo is the server's but for the last hash."""
    served = server_log(resp)
    ours = [pb.Event.FromString(e.event) for e in resp.entries]
    theirs = [pb.Event.FromString(e.event) for e in served.entries]
    assert ours == theirs
    assert [e.event for e in resp.entries[1:]] == [e.event for e in served.entries[1:]]
    assert resp.entries[0].event == theirs[0].SerializeToString(deterministic=True)
    served.match.last_hash = resp.match.last_hash
    assert resp.match == served.match and resp.seed == served.seed


def server_log(resp: spb.GetMatchLogResponse) -> spb.GetMatchLogResponse:
    """The same match's log built the server's way (tests/logs.py), from its engine events
    and where its time-outs are."""
    events: list[ev.Event] = []
    timed_out: list[int] = []
    pending = False
    for entry in resp.entries:
        event = pb.Event.FromString(entry.event)
        if event.WhichOneof("kind") == "timed_out":
            pending = True
        decoded = codec.event_from_pb(event)
        if decoded is not None:
            if pending:
                timed_out.append(len(events))
                pending = False
            events.append(decoded)
    match = replay(events, seed=resp.seed)
    info = resp.match
    return log_from_engine(
        match,
        resp.seed,
        info.match_id,
        names=[s.name for s in info.seats],
        timed_out=timed_out,
        move_ms=info.time_control.move_ms,
    )


class Checking:
    """A random bot that checks what it is shown against what a served seat is shown."""

    name = "checking"

    def __init__(self, seed: int) -> None:
        self.inner = RandomBot(seed=seed)

    def choose(self, state: SeatState) -> int:
        assert state.legal == sorted(state.legal)
        assert state.hand.bit_count() == state.hand_sizes[state.seat]
        assert state.seq > 0 and state.match_id
        return self.inner.choose(state)


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_every_game_and_player_count_audits_clean(game: str, players: int) -> None:
    resp = play(game, [Checking(s) for s in range(players)], seed=bytes([players]) * 32)
    report = audit_log(resp)
    assert report.ok, report.failure
    same_as_served(resp)
    order = kinds(resp)
    assert order[0] == "match_started" and order[-1] == "seed_revealed"
    assert order.count("seat_joined") == players
    assert [s.name for s in resp.match.seats] == [f"checking#{s}" for s in range(players)]


def test_the_same_seed_and_bots_give_the_same_bytes() -> None:
    bots = ["random", "rules", "random"]
    first = play("triathlon", bots, seed=SEED).SerializeToString()
    assert play("triathlon", bots, seed=SEED).SerializeToString() == first
    assert play("triathlon", bots, seed=bytes(32)).SerializeToString() != first
    drawn = play("triathlon", bots)
    assert len(drawn.seed) == 32 and audit_log(drawn).ok


def test_the_settings_are_a_served_matchs() -> None:
    resp = play("hexathlon", ["rules"] * 4, seed=SEED, options={"first_dealer": 2}, move_ms=500)
    started = pb.Event.FromString(resp.entries[0].event).match_started
    assert started.move_ms == 500 and list(started.reserved_seats) == [False] * 4
    assert started.forfeit_after == 0 and started.tournament_id == ""
    assert codec.dict_of(resp.match.options)["first_dealer"] == 2
    assert resp.match.status == spb.MATCH_STATUS_ENDED and resp.match.seed == SEED
    assert len(resp.match.match_id) == 16
    order = kinds(resp)
    joins = order.index("seat_joined")  # after the opening, before the first deal
    actions = {"card_played", "passed", "suit_excluded", "trump_chosen"}
    chance = {"dealer_drawn", "trump_drawn", "dealt"}
    assert not (actions | chance) & set(order[:joins])
    assert order[joins : joins + 4] == ["seat_joined"] * 4 and order[joins + 4] in chance


def test_crashing_and_illegal_bots_are_played_by_default_with_time_outs() -> None:
    told: list[tuple[int, int, str]] = []
    resp = play(
        "hexathlon",
        [Crasher(), IllegalMover(), FirstLegal(), "random"],
        seed=SEED,
        on_fault=lambda seat, seq, why: told.append((seat, seq, why)),
    )
    report = audit_log(resp)
    assert report.ok, report.failure
    same_as_served(resp)
    events = [pb.Event.FromString(e.event) for e in resp.entries]
    timed_out = [(e.seq, e.timed_out.seat) for e in events if e.WhichOneof("kind") == "timed_out"]
    assert [(seq, seat) for seat, seq, _ in told] == timed_out
    faults = [s.faults for s in resp.match.seats]
    assert faults[0] > 0 and faults[1] > 0 and faults[2:] == [0, 0]
    assert faults == [sum(seat == s for _, seat in timed_out) for s in range(4)]
    reasons = {seat: why for seat, _, why in told}
    assert "ZeroDivisionError: a bug in the bot" in reasons[0]
    assert "999" in reasons[1] and "not one of the legal actions" in reasons[1]


def test_a_failure_is_a_warning_by_default(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "cardarena.clients.bots.local"):
        play("triathlon", [Crasher(), "random", "random"], seed=SEED)
    assert "ZeroDivisionError" in caplog.text and "timed out at seq" in caplog.text


class NotAnAction:
    name = "nonsense"

    def choose(self, state: SeatState) -> object:
        return "QC"


def test_an_answer_that_is_no_action_is_a_fault_and_debug_raises() -> None:
    resp = play("triathlon", [NotAnAction(), "random", "random"], seed=SEED, on_fault=print)  # type: ignore[list-item]
    assert audit_log(resp).ok and resp.match.seats[0].faults > 0
    with pytest.raises(ZeroDivisionError, match="a bug"):
        play("triathlon", [Crasher(), "random", "random"], seed=SEED, debug=True)
    with pytest.raises(IllegalAnswer, match="999"):
        play("triathlon", [IllegalMover(), "random", "random"], seed=SEED, debug=True)


def test_a_bot_over_its_clock_is_asked_no_more() -> None:
    hanging = Sleeper()  # answers its first turn, then hangs: its seat times out for good
    try:
        resp = play("triathlon", [hanging, "random", "random"], seed=SEED, move_ms=50)
    finally:
        hanging.release.set()
    assert audit_log(resp).ok
    assert hanging.calls == 2  # never asked again after its clock ran out
    own_turns = resp.match.seats[0].faults
    assert own_turns > 5  # every later turn of the seat timed out


def exec_bot(tmp_path: Path, text: str = FIRST_LEGAL_PROGRAM) -> ExternalDecider:
    program = tmp_path / "bot.py"
    program.write_text(text)
    return ExternalDecider([sys.executable, str(program)])


def test_programs_play_through_the_decider_interface(tmp_path: Path) -> None:
    resp = play(
        "triathlon",
        [exec_bot(tmp_path), FirstLegal(), "random"],
        seed=SEED,
        names=["program", "first", "random"],
    )
    assert audit_log(resp).ok
    assert [s.faults for s in resp.match.seats] == [0, 0, 0]
    assert [s.name for s in resp.match.seats] == ["program", "first", "random"]
    # A program plays the very moves of the same bot in Python.
    python = play("triathlon", [FirstLegal(), FirstLegal(), "random"], seed=SEED)
    ours = [pb.Event.FromString(e.event) for e in resp.entries]
    theirs = [pb.Event.FromString(e.event) for e in python.entries]
    played = [e.card_played.card for e in ours if e.WhichOneof("kind") == "card_played"]
    assert played == [e.card_played.card for e in theirs if e.WhichOneof("kind") == "card_played"]


def test_a_program_that_dies_is_played_by_default(tmp_path: Path) -> None:
    dying = exec_bot(tmp_path, "import sys\nsys.exit(3)\n")
    told: list[str] = []
    resp = play(
        "triathlon",
        [dying, "random", "random"],
        seed=SEED,
        on_fault=lambda seat, seq, why: told.append(why),
    )
    assert audit_log(resp).ok and resp.match.seats[0].faults == len(told) > 0
    assert "could not start" in told[0] and "asked no more" in told[0]


def test_play_works_inside_a_running_event_loop() -> None:
    async def notebook() -> tuple[spb.GetMatchLogResponse, spb.GetMatchLogResponse]:
        inside = play("triathlon", ["random", "rules", "random"], seed=SEED)
        awaited = await play_async("triathlon", ["random", "rules", "random"], seed=SEED)
        return inside, awaited

    inside, awaited = asyncio.run(notebook())
    assert inside.SerializeToString() == awaited.SerializeToString()


@pytest.mark.parametrize(
    ("call", "refusal"),
    [
        (lambda: play("nogame", ["random"], seed=SEED), "unknown game 'nogame'"),
        (lambda: play("triathlon", ["random"] * 2, seed=SEED), "played by 3 players"),
        (lambda: play("triathlon", ["random"] * 3, seed=b"short"), "a seed is 32 bytes"),
        (lambda: play("triathlon", ["random"] * 3, move_ms=0), "move_ms must be > 0"),
        (lambda: play("triathlon", ["random", "nobot", "rules"]), "random, rules, mc"),
        (lambda: play("triathlon", ["random", 42, "rules"]), "is not a bot"),  # type: ignore[list-item]
        (lambda: play("triathlon", ["random"] * 3, names=["a", "b"]), "2 names for 3 seats"),
        (lambda: play("triathlon", ["random"] * 3, names=["a", "b", "x" * 65]), "64 printable"),
        (
            lambda: play("triathlon", ["random", "random", "rules"], options={"end": -1}),
            "option end",
        ),
    ],
)
def test_what_cannot_play_is_refused(call: object, refusal: str) -> None:
    with pytest.raises(ValueError, match=refusal):
        call()  # type: ignore[operator]


def test_one_bot_object_cannot_play_two_seats() -> None:
    bot = RandomBot(seed=1)
    with pytest.raises(ValueError, match="one bot object per seat"):
        play("triathlon", [bot, bot, "random"], seed=SEED)
