"""A ladder followed in the web app, in headless Chromium (issue 31, "a live web page").

A real server with a Triathlon ladder of five entrants, each playing through
``play_entrant(..., ladder=LadderEntry())`` as ``cardarena bot connect --ladder`` does: once
matches have counted for all five, one bot stops answering, so that its match stays in play
and its duplicate group held back, one entrant leaves (away) and one comes back as a new
version (the old one retired). The browser finds the ladder in the lobby (whose match list is
newest first), opens its page and reads the board, opens the held-back match (the page the
server's FAILED_PRECONDITION leads to says when it becomes watchable and leads back to the
ladder), replays a counted match, and measures the page at 1366x768 and 390x844: no sideways
scrolling, every panel within the window. Skipped without Chromium or Node, unless
``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.bots.rules_bot import RuleBot
from cardarena.clients.bots.state import SeatState
from cardarena.clients.client import ArenaClient
from cardarena.clients.tournament.entrant import EntrantReport, LadderEntry, play_entrant
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from tests.calls import run
from tests.serverproc import ServerProcess
from tests.waiting import eventually

from .browser import playwright_core
from .test_table import SHOTS, tools

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_ladder.cjs")
NAMES = ("alice", "bob", "carol", "dave", "gus")
CREATOR = secrets.token_urlsafe(32)


class Gate:
    """What lets the gated bot answer: while shut, it waits on its turn (the match stays in
    play, and its duplicate group held back) and says in which match."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.stuck = threading.Event()
        self.match_id = ""


class GatedBot:
    """Plays the lowest legal action once its gate is open."""

    name = "gated"

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def choose(self, state: SeatState) -> int:
        if not self.gate.open.is_set():
            self.gate.match_id = state.match_id
            self.gate.stuck.set()
            self.gate.open.wait(240)
        return min(state.legal)


async def scenario(server: ServerProcess) -> tuple[dict[str, Any], str, str, lpb.LadderInfo]:
    browser, node = tools()
    library = playwright_core()
    SHOTS.mkdir(parents=True, exist_ok=True)
    gate = Gate()
    keys = {name: secrets.token_urlsafe(32) for name in NAMES}
    async with ArenaClient(server.address, retry_for=30) as client:
        request = lpb.CreateLadderRequest(
            name="e2e ladder",
            game="triathlon",
            players=3,
            # Long enough that a match waiting on a bot that does not answer stays in play
            # while the browser looks; the other bots answer at once.
            time_control=spb.TimeControl(move_ms=300_000),
            entrants=[tpb.EntrantSpec(name=n, key=keys[n]) for n in NAMES],
            concurrency=6,
            creator_secret=CREATOR,
        )
        request.options.update({"max_deals": 1})
        ladder_id = (await client.ladders.create(request)).ladder.ladder_id

        def enter(name: str, bot: Any, version: str = "") -> asyncio.Task[EntrantReport]:
            return asyncio.create_task(
                play_entrant(
                    client,
                    ladder_id,
                    keys[name],
                    lambda _assigned: PythonDecider(bot),
                    reconnect_for=30,
                    capacity=1 if name == "gus" else 2,
                    ladder=LadderEntry(version),
                    log=lambda _text: None,
                )
            )

        tasks = {
            "alice": enter("alice", RuleBot),
            "bob": enter("bob", RandomBot),
            "carol": enter("carol", RandomBot),
            "dave": enter("dave", RandomBot),
            "gus": enter("gus", lambda: GatedBot(gate)),
        }
        try:

            async def all_on_board() -> bool:
                info = await client.ladders.get(ladder_id)
                played = {r.player for r in info.board if r.matches > 0}
                return info.counted >= 9 and played >= set(NAMES)

            await eventually(all_on_board, within=180, every=0.5, what="every entrant counted")
            # gus stops answering (its match stays in play, its group held back), then carol
            # leaves (away) and dave comes back as a new version (the old one retired).
            gate.open.clear()
            await eventually(gate.stuck.is_set, within=120, every=0.1, what="the gated bot stuck")
            for name in ("carol", "dave"):
                tasks[name].cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await tasks[name]
            tasks["dave"] = enter("dave", RandomBot, "v2")

            async def settled() -> bool:
                rows = {r.player: r for r in (await client.ladders.get(ladder_id)).board}
                return not rows["carol"].connected and rows["dave"].retired

            await eventually(settled, within=30, every=0.2, what="carol away, dave retired")
            driver = await asyncio.create_subprocess_exec(
                node,
                str(DRIVER),
                str(library),
                browser,
                f"http://{server.web_address}",
                str(SHOTS),
                ladder_id,
                gate.match_id,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            stdout, stderr = await asyncio.wait_for(driver.communicate(), 300)
            assert driver.returncode == 0, f"the browser driver failed:\n{stderr.decode()[-4000:]}"
            seen: dict[str, Any] = json.loads(stdout)
            after = await client.ladders.get(ladder_id)
        finally:
            gate.open.set()
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
    return seen, ladder_id, gate.match_id, after


def test_a_ladder_page_shows_its_board_and_holds_back_its_groups_in_play(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "data", web="127.0.0.1:0") as server:
        seen, ladder_id, held_id, after = run(scenario(server), seconds=600)

    assert seen["errors"] == []
    # The lobby lists the ladder, and its matches newest first.
    lobby = seen["lobby"]
    assert ladder_id in lobby["ladders"]
    assert lobby["created"] and lobby["created"] == sorted(lobby["created"], reverse=True)
    assert seen["url"] == f"?ladder={ladder_id}"

    first = seen["first"]
    assert first["error"] == "" and first["status"] == "running"
    assert first["title"].startswith("e2e ladder: Triathlon") and "3 seats" in first["title"]
    assert "matches counted" in first["progress"]
    board = {row["player"]: row for row in first["board"]}
    # Every player the server rates, each shown in its state.
    assert set(board) == {r.player for r in after.board}
    assert {board[n]["state"] for n in ("alice", "bob", "gus")} == {"connected"}
    assert board["carol"]["state"] == "away" and board["carol"]["seen"] not in ("", "now")
    assert board["dave"]["state"] == "retired"
    ratings = [float(row["rating"]) for row in first["board"]]
    assert ratings == sorted(ratings, reverse=True)
    assert all(row["games"].isdigit() for row in first["board"])
    # The gated bot's match is in play and held back, saying when it becomes watchable.
    (line,) = [p for p in first["playing"] if p["id"] == held_id]
    assert line["held"] and "watchable once all 3 rotations of group" in line["text"]
    assert first["recent"] and any(r["replay"] for r in first["recent"])

    # Its link leads to the refusal's page: the server's words name the ladder and say how
    # far the group is; the page leads back to the ladder.
    held = seen["heldPage"]
    assert held["url"] == f"?match={held_id}"
    assert f"of ladder {ladder_id}" in held["words"] and "readable once all 3" in held["words"]
    assert held["follow"] == f"?ladder={ladder_id}" and seen["back"] == f"?ladder={ladder_id}"
    assert seen["replay"]["ok"] == "true" and seen["replay"]["url"].startswith("?log=")

    # A laptop and a phone: the board shows, nothing scrolls sideways, no panel spills.
    for name, size in seen["sizes"].items():
        assert size["board"], name
        assert size["scrollWidth"] <= size["width"], (name, size["scrollWidth"])
        assert size["rowsPastEdge"] == 0, name
        for panel in size["panels"]:
            assert panel["scroll"] <= panel["client"] + 1, (name, panel)
            assert panel["right"] <= size["width"], (name, panel)
        assert size["lobby"]["scrollWidth"] <= size["lobby"]["width"], name
