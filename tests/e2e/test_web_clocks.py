"""The web table's clocks (issue 30): what each seat has left of its bank and of its round
budget, folded in the browser from MatchStarted's settings and each entry's ``think_ms``, must
be what the server folds (``cardarena.v1.clocks.SeatClocks``), entry by entry; the seat to act
counts down from its prompt to its deadline.

``fold_clocks.mjs`` runs the table's own modules (``src/model.js``, ``src/table.js``) in Node,
bundled by the app's esbuild, over a whole log. ``drive_clocks.cjs`` opens a banked match in
headless Chromium, as a spectator at the three sizes of ``test_layout.py`` and as the seat to
act: every seat shows what the log leaves it, only the seat to act counts down, and the seats
still fit the felt. Skipped without Node, npm or Chromium, unless ``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from cardarena.clients.bots import play
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import SeatClocks, TimeControl
from tests.calls import RPC_TIMEOUT, Table, act, join_all, snapshot_of, stub, watch_feed
from tests.clients.test_bot_clocks import BANKED, SEED, charged_log
from tests.serverproc import ServerProcess

from .browser import REPO, playwright_core, run_driver, skip_unless_required
from .test_layout import SIZES, inside, overlap
from .test_table import SHOTS, tools
from .test_web_bundle import WEB, npm_tools

pytestmark = pytest.mark.e2e

FOLD = Path(__file__).with_name("fold_clocks.mjs")


def folded_by_the_table(entries: list[pb.Event], tmp_path: Path) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        skip_unless_required("node is not installed", "it")
    npm_tools()
    bundle = tmp_path / "fold.mjs"
    if not bundle.exists():
        subprocess.run(
            [str(WEB / "node_modules" / ".bin" / "esbuild"), str(FOLD), "--bundle",
             "--platform=node", "--format=esm", f"--outfile={bundle}", "--log-level=warning"],
            cwd=REPO, env={**os.environ, "NODE_PATH": str(WEB / "node_modules")},
            check=True, timeout=60,
        )  # fmt: skip
    sent = json.dumps([base64.b64encode(e.SerializeToString()).decode() for e in entries])
    done = subprocess.run(
        [node, str(bundle)], input=sent, capture_output=True, text=True, timeout=60, check=True
    )
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_table_folds_every_bank_as_the_server_does(tmp_path: Path) -> None:
    entries = charged_log()
    seen = folded_by_the_table(entries, tmp_path)
    server = SeatClocks(BANKED, 3)
    for entry, told in zip(entries, seen["folded"], strict=True):
        server.fold(entry)
        expected = [{"bank": b, "round": r} for b, r in zip(server.bank, server.round, strict=True)]
        assert told == expected, entry
    assert server.bank != [BANKED.bank_ms] * 3, "nothing was charged"


def test_the_seat_to_act_counts_down_to_its_deadline(tmp_path: Path) -> None:
    turn = folded_by_the_table(charged_log(), tmp_path)["turn"]
    assert turn["prompted"] == {"bank": 4_000, "round": 9_000}  # its YourTurn's word
    assert turn["later"] == {"bank": 2_500, "round": 7_500}
    assert turn["after"] == {"bank": 0, "round": 5_000}  # the whole allowance: the bank
    assert turn["other"]["bank"] not in (None, 2_500), "only the seat to act counts down"


def test_a_match_without_a_bank_shows_none_and_durations_read_like_a_clock(
    tmp_path: Path,
) -> None:
    log = play("pentathlon", ["random"] * 3, seed=SEED, options={"rounds": ["queens"]})
    seen = folded_by_the_table([pb.Event.FromString(e.event) for e in log.entries], tmp_path)
    assert all(left is None for after in seen["folded"] for left in after)
    assert seen["durations"] == ["0.0s", "4.3s", "10s", "10s", "1:00", "1:05", "60:00"]


# -- in the browser --------------------------------------------------------------------------

DRIVER = Path(__file__).with_name("drive_clocks.cjs")
TABLE_CLOCKS = TimeControl(bank_ms=90_000, increment_ms=1_000, round_ms=60_000)


async def banked_table(address: str) -> tuple[Table, int, SeatClocks]:
    """A five-seat Hexathlon on a bank, a few actions in (some slow): the match, the seat to
    act, and the clocks its log leaves (folded from a spectator's stream)."""
    async with grpc.aio.insecure_channel(address) as channel:
        api = stub(channel)
        options = struct_pb2.Struct()
        options.update({"rounds": ["pass"]})
        request = spb.CreateMatchRequest(
            game="hexathlon",
            players=5,
            options=options,
            time_control=spb.TimeControl(**TABLE_CLOCKS.settings()),
        )
        info = (await api.CreateMatch(request, timeout=RPC_TIMEOUT)).match
        table = Table(info.match_id, await join_all(api, info.match_id, 5))
        for n in range(7):
            await asyncio.sleep(0.4 if n % 2 else 0.05)
            await act(api, table)
        now = await snapshot_of(api, info.match_id)
        feed = watch_feed(api, info.match_id)
        await feed.snapshot()
        folded = SeatClocks(TABLE_CLOCKS, 5)
        for entry in await feed.events_through(now.seq):
            folded.fold(entry)
        feed.cancel()
    return table, now.to_act, folded


def shown_ms(text: str) -> float:
    """A duration as the table writes it ("bank 1:05", "round 42s", "bank 4.2s"), in ms."""
    found = re.fullmatch(r"\w+ (?:(\d+):(\d\d)|([\d.]+)s)", text)
    assert found, text
    minutes, seconds, plain = found.groups()
    return (int(minutes) * 60 + int(seconds) if plain is None else float(plain)) * 1000


def test_a_banked_table_shows_every_seats_bank_and_counts_down_the_seat_to_act(
    tmp_path: Path,
) -> None:
    browser, node = tools()
    library = playwright_core()
    SHOTS.mkdir(parents=True, exist_ok=True)
    with ServerProcess(tmp_path / "data", web="127.0.0.1:0") as server:
        table, to_act, folded = asyncio.run(banked_table(server.address))
        plan = {"match": table.match_id, "toAct": to_act, "token": table.tokens[to_act],
                "sizes": SIZES}  # fmt: skip
        seen = run_driver(
            [node, str(DRIVER), str(library), browser, f"http://{server.web_address}",
             str(SHOTS), json.dumps(plan)]
        )  # fmt: skip
    assert seen["errors"] == []
    assert folded.bank != [TABLE_CLOCKS.bank_ms] * 5, "nothing was charged"
    for name, looked in [*((s["name"], s) for s in seen["sizes"]), ("seat", seen["seat"])]:
        first, later = looked["first"], looked["later"]
        assert [s["seat"] for s in first["seats"]] == list(range(5)), name
        for before, after in zip(first["seats"], later["seats"], strict=True):
            seat = before["seat"]
            assert before["bank"]["ms"] == folded.bank[seat], (name, seat)
            assert before["round"]["ms"] == folded.round[seat], (name, seat)
            if seat == to_act:
                assert before["bank"]["running"] and after["bank"]["running"], name
                assert shown_ms(after["bank"]["text"]) < shown_ms(before["bank"]["text"]), name
                assert shown_ms(after["round"]["text"]) < shown_ms(before["round"]["text"])
                assert shown_ms(before["bank"]["text"]) <= folded.bank[seat] + 1000
            else:
                assert not before["bank"]["running"], (name, seat)
                assert after["bank"]["text"] == before["bank"]["text"], (name, seat)
                assert 0 <= shown_ms(before["bank"]["text"]) - folded.bank[seat] < 1000
        assert later["scrollWidth"] <= later["viewport"]["width"], name
        for a in later["seats"]:
            assert inside(a["box"], later["felt"]), (name, a)
            for b in later["seats"]:
                if a["seat"] < b["seat"]:
                    assert not overlap(a["box"], b["box"]), (name, a, b)
            for card in later["trick"]:
                assert not overlap(a["box"], card), (name, "a seat covers a card", a, card)
    assert seen["seat"]["first"]["legal"] > 0, "the seat's page was not asked to play"
