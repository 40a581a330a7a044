"""Practice against the server's house bots, in headless Chromium through the gateway.

The lobby's form, on a server with ``--house-bots``, asks the server for its bots: the page
keeps no bots of its own, and the other seats are the house's. Its tab closed, the seat is
taken back in new tabs of the same browser (by the seat's link, by the share link, and from
the spectator's page). A second match, on a short move clock, has its tab closed for good:
it plays to its end all the same (the player's seat by its clock, the house seats by their
bots) and its log audits clean. Skipped without Chromium or Node, unless
``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.clients.audit import audit_log
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from tests.calls import stub
from tests.serverproc import ServerProcess

from .browser import playwright_core, run_driver
from .test_table import tools

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_house.cjs")
WITHIN = 180.0
"""How long the closed tab's match may take to end on a busy machine (a bound, not a measure)."""


async def followed_to_its_end(address: str, match_id: str) -> tuple[spb.MatchInfo, list[Any]]:
    async with grpc.aio.insecure_channel(address) as channel:
        api = stub(channel)
        deadline = time.monotonic() + WITHIN
        while True:
            info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)).match
            if info.status == spb.MATCH_STATUS_ENDED:
                break
            assert time.monotonic() < deadline, f"match {match_id} did not end: {info}"
            await asyncio.sleep(0.2)
        log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=10)
        report = audit_log(log)
        assert report.ok, report
        return info, [pb.Event.FromString(entry.event) for entry in log.entries]


def played_by(events: list[pb.Event]) -> dict[int, int]:
    """Each seat's cards played by the seat itself (not by its clock after a TimedOut)."""
    counts: dict[int, int] = {}
    timed_out = None
    for event in events:
        if event.HasField("timed_out"):
            timed_out = event.timed_out.seat
        elif event.HasField("card_played"):
            seat = event.card_played.seat
            if seat != timed_out:
                counts[seat] = counts.get(seat, 0) + 1
            timed_out = None
    return counts


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    browser, node = tools()
    library = playwright_core()
    data = tmp_path_factory.mktemp("house") / "data"
    with ServerProcess(data, web="127.0.0.1:0", extra=["--house-bots", "4"]) as server:
        result = run_driver(
            [node, str(DRIVER), str(library), browser, f"http://{server.web_address}"]
        )
        assert "failure" not in result, result.get("failure")
        info, events = asyncio.run(followed_to_its_end(server.address, result["second"]["match"]))
    result["ended"], result["events"] = info, events
    return result


def test_the_practice_match_asks_the_server_for_its_house_bots(seen: dict[str, Any]) -> None:
    assert seen["errors"] == []
    first = seen["first"]
    assert sum("(house)" in name for name in first["names"]) == 2, first["names"]
    assert "House bots play the other seats" in first["notice"]
    assert seen["kept"]["bots"] == []  # the page plays none itself
    assert set(seen["kept"]["seats"]) == {"0"}


def test_a_new_tab_takes_the_seat_back_with_the_stored_token(seen: dict[str, Any]) -> None:
    for how in ("bySeat", "byShare", "takenBack"):
        page = seen[how]
        assert page["seat"] == "0" and "seat=0" in page["url"], (how, page)
        assert page["hand"] > 0 and "taken" not in page["notice"], (how, page)
        assert page["error"] == "", (how, page)
    assert seen["watching"]["takeBack"] and seen["watching"]["seat"] == ""


def test_a_practice_match_against_house_bots_finishes_with_its_tab_closed(
    seen: dict[str, Any],
) -> None:
    info: spb.MatchInfo = seen["ended"]
    assert not info.cancelled and list(info.winners)
    assert [seat.name for seat in info.seats][1:] == ["rules (house)", "rules (house)"]
    played = played_by(seen["events"])
    assert played.get(1, 0) > 0 and played.get(2, 0) > 0
