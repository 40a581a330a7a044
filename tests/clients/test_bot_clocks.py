"""Issue 30's clocks as bots see them: what a seat has left of its bank and of its round budget
(docs/protocol.md, "Clocks") goes with every prompt, in the Python bot's ``SeatState``
(docs/bots.md) and in the line protocol's ``turn`` (docs/bot-protocol.md), and the match's
time control in ``start`` and ``match_started``.

Both are folded from the seat's own stream (each action's ``think_ms``, each ``RoundStarted``)
as the server folds them; against a real server, every ``YourTurn`` must say what the fold
says, and every ``turn`` a program is written must say what the full log says.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import struct_pb2

from cardarena.clients.bots import SeatState, play
from cardarena.clients.bots.decider import SeatContext
from cardarena.clients.bots.entries import fold_entry
from cardarena.clients.bots.external import ExternalDecider
from cardarena.clients.bots.external.protocol import entry_message, start_message, turn_message
from cardarena.clients.client import ArenaClient
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import ACTION_KINDS, SeatClocks, TimeControl

from ..calls import RPC_TIMEOUT, run
from ..helpers import fenced
from ..serverproc import ServerProcess

BANKED = TimeControl(move_ms=0, bank_ms=30_000, increment_ms=200, round_ms=20_000)
SEED = bytes(range(32))
ROOT = Path(__file__).resolve().parents[2]


def charged_log() -> list[pb.Event]:
    """A real local match's log (two rounds), with a bank, an increment and a round budget
    written into its MatchStarted, a time charged on every action, and one time-out."""
    log = play("pentathlon", ["random", "random", "random"], seed=SEED,
               options={"rounds": ["queens", "clubs"]})  # fmt: skip
    entries = [pb.Event.FromString(e.event) for e in log.entries]
    started = entries[0].match_started
    started.bank_ms, started.increment_ms = BANKED.bank_ms, BANKED.increment_ms
    started.round_ms, started.move_ms = BANKED.round_ms, BANKED.move_ms
    for entry in entries:
        if entry.WhichOneof("kind") in ACTION_KINDS:
            entry.think_ms = (entry.seq * 389) % 700
    first_play = next(e for e in entries if e.WhichOneof("kind") == "card_played")
    first_play.ClearField("think_ms")  # a default action's entry carries none
    timed_out = pb.Event(timed_out=pb.TimedOut(seat=first_play.card_played.seat), think_ms=9_000)
    at = entries.index(first_play)
    entries = [*entries[:at], timed_out, *entries[at:]]
    for seq, entry in enumerate(entries, start=1):
        entry.seq = seq
    return entries


def test_a_seat_state_folds_the_banks_as_the_server_does() -> None:
    entries = charged_log()
    server = SeatClocks(BANKED, 3)
    state = SeatState("m1", 1)
    for entry in entries:
        server.fold(entry)
        fold_entry(state, codec.project_pb(entry, 1, voluntary_pass=False))
        assert (state.bank_ms, state.round_ms) == (server.bank, server.round), entry.seq
        if entry.WhichOneof("kind") == "round_started":
            assert state.round_ms == [BANKED.round_ms] * 3
    assert state.time_control == BANKED and state.over
    late = next(e.timed_out.seat for e in entries if e.WhichOneof("kind") == "timed_out")
    assert state.bank_ms[late] < min(b for s, b in enumerate(state.bank_ms) if s != late)


def test_a_round_renews_every_round_budget_and_leaves_the_banks() -> None:
    state = SeatState("m1", 0)
    started = pb.MatchStarted(game="pentathlon", players=3, bank_ms=1_000, increment_ms=50,
                              round_ms=700)  # fmt: skip
    fold_entry(state, pb.Event(seq=1, match_started=started))
    assert (state.bank_ms, state.round_ms) == ([1_000] * 3, [700] * 3)
    state.note_clocks(pb.Event(seq=2, passed=pb.Passed(seat=2), think_ms=300))
    state.note_clocks(pb.Event(seq=3, timed_out=pb.TimedOut(seat=0), think_ms=700))
    assert (state.bank_ms, state.round_ms) == ([300, 1_000, 750], [0, 700, 400])
    state.note_clocks(pb.Event(seq=4, round_started=pb.RoundStarted(round=1, kind="clubs")))
    assert (state.bank_ms, state.round_ms) == ([300, 1_000, 750], [700] * 3)


def test_without_a_bank_or_a_round_budget_the_lists_are_empty() -> None:
    state = SeatState("m1", 0)
    fold_entry(state, pb.Event(seq=1, match_started=pb.MatchStarted(players=3, move_ms=5_000)))
    state.note_clocks(pb.Event(seq=2, passed=pb.Passed(seat=0), think_ms=300))
    assert state.time_control == TimeControl(move_ms=5_000)
    assert (state.bank_ms, state.round_ms) == ([], [])
    state.legal = [1]
    told = turn_message(state, now_unix_ms=0, prompt=1)
    assert (told["bank_ms"], told["round_ms"]) == (None, None)
    bank_only = pb.MatchStarted(players=3, bank_ms=2_000)
    fold_entry(state, pb.Event(seq=3, match_started=bank_only))
    assert (state.bank_ms, state.round_ms) == ([2_000] * 3, [])


def test_the_line_protocol_carries_the_clocks() -> None:
    """``start`` and ``match_started`` give the time control, a turn what is left."""
    context = SeatContext("m1", "pentathlon", 2, 3, ("a", "b", "c"), {}, True, 0, BANKED)
    clocks = {"move_ms": 0, "bank_ms": 30_000, "increment_ms": 200, "round_ms": 20_000}
    assert start_message(context)["time_control"] == clocks
    old_runner = SeatContext("m1", "pentathlon", 2, 3, ("a", "b", "c"), {}, True, 500)
    assert start_message(old_runner)["time_control"] is None
    entries = charged_log()
    started = entry_message(entries[0])
    assert started is not None and started["event"] == "match_started"
    assert started["time_control"] == clocks
    timed_out = next(e for e in entries if e.WhichOneof("kind") == "timed_out")
    assert entry_message(timed_out) == {
        "type": "event", "seq": timed_out.seq, "event": "timed_out",
        "seat": timed_out.timed_out.seat,
    }  # fmt: skip
    state = SeatState("m1", 2)
    for entry in entries[:30]:
        fold_entry(state, codec.project_pb(entry, 2, voluntary_pass=False))
    state.legal = [0]
    told = turn_message(state, now_unix_ms=0, prompt=4)
    assert (told["bank_ms"], told["round_ms"]) == (state.bank_ms[2], state.round_ms[2])
    assert json.loads(json.dumps(told)) == told


def test_the_documented_start_and_turn_show_every_field() -> None:
    """docs/bot-protocol.md's example ``start`` and ``turn`` lines name every field the runner
    writes (the clocks' among them)."""
    doc = (ROOT / "docs" / "bot-protocol.md").read_text()
    examples = {
        kind: set(re.findall(r'"(\w+)":', block))
        for block in fenced(doc, "json")
        for kind in re.findall(r'^\{"type": "(start|turn)"', block)
    }
    context = SeatContext("m1", "pentathlon", 2, 3, ("a", "b", "c"), {}, True, 0, BANKED)
    start = start_message(context)
    assert set(start) | set(start["time_control"]) <= examples["start"]
    state = SeatState("m1", 0, legal=[0])
    turn = turn_message(state, now_unix_ms=0, prompt=1)
    assert set(turn) | set(turn["state"]) <= examples["turn"]


def test_the_pacing_example_of_the_docs_shares_the_bank() -> None:
    text = (ROOT / "docs" / "bots.md").read_text()
    time_section = text[text.index("## Time, faults and randomness") :]
    (example,) = fenced(time_section[: time_section.index("\n## ")], "python")
    space: dict[str, Any] = {}
    exec(compile(example, "docs/bots.md", "exec"), space)
    state = SeatState("m1", 1)
    fold_entry(state, pb.Event(seq=1, match_started=pb.MatchStarted(players=3, bank_ms=9_000,
                                                                    increment_ms=100)))  # fmt: skip
    state.deadline_unix_ms = int(time.time() * 1000) + 9_000
    assert 0.95 < space["think_budget_s"](state, moves_left=9) <= 1.1
    state.deadline_unix_ms = int(time.time() * 1000) + 300  # the deadline comes first
    assert space["think_budget_s"](state, moves_left=1) <= 0.25


# -- against a server ------------------------------------------------------------------------

RECORDER = """\
import json, sys, time

# Writes every message it is sent to argv[1]; answers each turn after a short think.
with open(sys.argv[1], "a") as seen:
    for line in sys.stdin:
        seen.write(line)
        seen.flush()
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"hello": True}), flush=True)
        elif message["type"] == "start":
            print(json.dumps({"ready": True}), flush=True)
        elif message["type"] == "turn":
            time.sleep(0.03)
            print(json.dumps({"id": message["id"], "action": message["legal"][0]}), flush=True)
"""


async def checked_seat(client: ArenaClient, match_id: str, seat: int, token: str) -> int:
    """Play ``seat`` from its own stream (its lowest legal action, after a short think),
    folding every entry into a SeatState; each YourTurn must say what the fold says. Returns
    the turns checked."""
    state = SeatState(match_id, seat)
    call = client.stub.StreamEvents(
        spb.StreamEventsRequest(match_id=match_id, seat=seat),
        metadata=call_auth(token),
        timeout=60,
    )
    checked = 0
    prompt: pb.Snapshot | pb.YourTurn | None = None
    async for message in call:
        kind = message.WhichOneof("kind")
        if kind == "event":
            fold_entry(state, message.event)
        elif kind == "snapshot" and message.snapshot.legal_actions:
            prompt = message.snapshot  # its turn as the stream opens: once caught up to it
        elif kind == "your_turn":
            turn = prompt = message.your_turn
            assert turn.seq == state.seq
            assert (turn.bank_ms, turn.round_ms) == (state.bank_ms[seat], state.round_ms[seat])
            checked += 1
        if prompt is not None and prompt.seq == state.seq:
            await asyncio.sleep(0.02)
            request = spb.SubmitActionRequest(
                match_id=match_id, seat=seat, action=prompt.legal_actions[0],
                expected_seq=prompt.seq, request_id=f"{seat}-{prompt.seq}",
            )  # fmt: skip
            prompt = None
            try:
                await client.stub.SubmitAction(request, metadata=call_auth(token), timeout=10)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.ABORTED, error
        if state.over:
            break
    call.cancel()
    return checked


def call_auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def banked_match(address: str, program: ExternalDecider) -> tuple[list[int], list[pb.Event]]:
    async with ArenaClient(address) as client:
        options = struct_pb2.Struct()
        options.update({"max_deals": 1})
        request = spb.CreateMatchRequest(
            game="triathlon",
            players=3,
            options=options,
            time_control=spb.TimeControl(**BANKED.settings()),
        )
        info = (await client.stub.CreateMatch(request, timeout=RPC_TIMEOUT)).match
        tickets = [await client.join(info.match_id, seat=s, name=f"s{s}") for s in range(3)]
        context = SeatContext(info.match_id, "triathlon", 0, 3, ("s0", "s1", "s2"),
                              codec.dict_of(info.options), True, 0, BANKED)  # fmt: skip
        await program.start(context)

        def observe(_: SeatState, entry: pb.Event) -> None:
            program.observe(entry)

        played = asyncio.create_task(
            client.play(tickets[0], decide=program.decide, on_event=observe)
        )
        checked = await asyncio.gather(
            *(checked_seat(client, info.match_id, s, tickets[s].token) for s in (1, 2))
        )
        await program.finish(await played)
        log = await client.match_log(info.match_id)
    return list(checked), [pb.Event.FromString(e.event) for e in log.entries]


def test_a_banked_match_tells_every_prompt_what_is_left(
    server_process: ServerProcess, tmp_path: Path
) -> None:
    script, seen = tmp_path / "recorder.py", tmp_path / "seen.jsonl"
    script.write_text(RECORDER)
    program = ExternalDecider([sys.executable, str(script), str(seen)])
    checked, entries = run(banked_match(server_process.address, program), seconds=90)
    assert all(n > 3 for n in checked), checked
    lines: list[dict[str, Any]] = [json.loads(line) for line in seen.read_text().splitlines()]
    clocks = dataclasses.asdict(BANKED)
    (start,) = [m for m in lines if m["type"] == "start"]
    assert start["time_control"] == clocks
    (started,) = [m for m in lines if m.get("event") == "match_started"]
    assert started["time_control"] == clocks
    turns = [m for m in lines if m["type"] == "turn"]
    assert len(turns) > 3
    for turn in turns:  # what the full log leaves seat 0 at the turn's seq
        folded = SeatClocks(BANKED, 3)
        for entry in entries:
            if entry.seq <= turn["seq"]:
                folded.fold(entry)
        assert (turn["bank_ms"], turn["round_ms"]) == (folded.bank[0], folded.round[0])
    assert any(t["bank_ms"] != BANKED.bank_ms for t in turns[1:]), "nothing was ever charged"
    assert all(0 < t["remaining_ms"] <= min(t["bank_ms"], t["round_ms"]) for t in turns)
