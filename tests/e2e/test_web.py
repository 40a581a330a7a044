"""The web app through the gRPC-Web gateway, in headless Chromium.

``cardarena serve --web`` serves ``clients/web`` and translates gRPC-Web to gRPC. The test
creates a Pentathlon against the page's bots, clicks seat 0's legal cards to the end, watches
the match as a spectator (no hidden cards), then opens its log from the list; the totals shown
must equal GetMatch's. Skipped without Chromium or Node, unless ``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import grpc
import pytest

from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from tests.calls import stub
from tests.serverproc import ServerProcess

from .browser import find_chromium, playwright_core, run_driver, skip_unless_required

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_web.cjs")
OPTIONS = {"rounds": ["pass"]}


def tools() -> tuple[str, str]:
    browser, node = find_chromium(), shutil.which("node")
    if not (browser and node):
        message = "the web e2e test needs Chromium and Node (apt-get install -y chromium nodejs)"
        skip_unless_required(message, "them")
    return browser, node


async def get_match(address: str, match_id: str) -> spb.GetMatchResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await stub(channel).GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)


def test_playing_a_match_in_the_browser(tmp_path: Path) -> None:
    browser, node = tools()
    library = playwright_core()
    with ServerProcess(tmp_path / "data", web="127.0.0.1:0") as server:
        seen = run_driver(
            [
                node,
                str(DRIVER),
                str(library),
                browser,
                f"http://{server.web_address}",
                json.dumps(OPTIONS),
            ]
        )
        match = asyncio.run(get_match(server.address, seen["match"])).match

    assert seen["errors"] == []
    assert seen["final"]["error"] == ""
    assert match.status == spb.MATCH_STATUS_ENDED
    totals = [str(codec.score_from_pb(t)) for t in match.totals]
    assert seen["final"]["over"]
    assert seen["final"]["totals"] == totals
    assert seen["clicks"] > 0
    # The spectator sees how many cards each seat holds, never which.
    watching = seen["watching"]["hands"]
    assert len(watching) == 3
    assert all(hand["hidden"] and hand["cards"] == [] for hand in watching)
    assert sum(hand["size"] for hand in watching) > 0
    assert seen["watchedEnd"]["totals"] == totals
    assert seen["row"] == "ended"
    assert seen["log"]["step"] == seen["log"]["steps"] == match.last_seq
    assert seen["log"]["totals"] == totals
