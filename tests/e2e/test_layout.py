"""The table fits the screen: a laptop (1366x768), a phone (390x844) and a big screen
(1920x1080), in headless Chromium.

At each size a practice match of four games is played from the lobby to a stage (a trick of
Hexathlon with five seats, a Fan Tan layout, Triathlon's trump call, a Crazy Sixes hand with
dead piles) and, on the
seat's turn, the page is measured: the hand and the trick must be inside the window with no
scrolling, nothing may pass the page's width, the seats, the rows and the dead piles must stay
on the felt, no two seats may overlap, and the rank in the corner of each card of the hand
must show whole ("10" too). Crazy Sixes is then played out for the ending (placings, rematch,
new match, replay) and its replay opened, whose face-up hands must stay in their seats on the
felt. The lobby must list the newest match first and fit the width; an unknown
match's page must say what to do next. Screenshots go to test-artifacts/screenshots/
(``layout-SIZE-STAGE.png``); with ``CARDARENA_DOCS_SCREENSHOTS=1`` the ones the docs show are
copied to docs/. Skipped without Chromium or Node, unless ``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.serverproc import ServerProcess

from .browser import REPO, playwright_core, run_driver
from .test_table import SHOTS, tools

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_layout.cjs")
SIZES = [
    {"name": "laptop", "width": 1366, "height": 768, "extras": True},
    {"name": "phone", "width": 390, "height": 844},
    {"name": "big", "width": 1920, "height": 1080},
]
STAGES = [
    {"game": "hexathlon", "players": 5, "fields": {"rounds": "pass"}, "stage": "trick"},
    {"game": "pentathlon", "players": 4, "fields": {"rounds": "fan_tan"}, "stage": "fantan"},
    {"game": "triathlon", "players": 3, "fields": {"first_dealer": 0}, "stage": "call"},
    {"game": "crazy_sixes", "players": 3, "fields": {"target_score": 1}, "stage": "sixes"},
]
# The screenshots docs/web.md and the README show.
DOCS = {
    "layout-laptop-trick.png": "web-table.png",
    "layout-phone-trick.png": "web-table-phone.png",
    "layout-big-fantan.png": "web-table-fantan.png",
    "layout-phone-sixes.png": "web-table-sixes-phone.png",
    "layout-laptop-ending.png": "web-table-ending.png",
    "layout-laptop-last-trick.png": "web-table-last-trick.png",
}
SLACK = 0.5  # CSS pixels of rounding


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    browser, node = tools()
    library = playwright_core()
    SHOTS.mkdir(parents=True, exist_ok=True)
    data = tmp_path_factory.mktemp("layout") / "data"
    plan = {"sizes": SIZES, "stages": STAGES}
    with ServerProcess(data, web="127.0.0.1:0") as server:
        result = run_driver(
            [node, str(DRIVER), str(library), browser, f"http://{server.web_address}",
             str(SHOTS), json.dumps(plan)]
        )  # fmt: skip
    if os.environ.get("CARDARENA_DOCS_SCREENSHOTS") == "1":
        for shot, doc in DOCS.items():
            shutil.copyfile(SHOTS / shot, REPO / "docs" / doc)
    return result


def inside(box: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        box["left"] >= outer["left"] - SLACK
        and box["top"] >= outer["top"] - SLACK
        and box["right"] <= outer["right"] + SLACK
        and box["bottom"] <= outer["bottom"] + SLACK
    )


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1
    )


def stages() -> list[tuple[str, str]]:
    return [(str(size["name"]), str(stage["stage"])) for size in SIZES for stage in STAGES]


def stage_of(seen: dict[str, Any], size: str, stage: str) -> dict[str, Any]:
    record = next(s for s in seen["sizes"] if s["name"] == size)
    found: dict[str, Any] = next(s for s in record["stages"] if s["stage"] == stage)
    return found


def test_no_errors_and_every_stage_reached(seen: dict[str, Any]) -> None:
    assert seen["errors"] == []
    for size, stage in stages():
        assert stage_of(seen, size, stage)["reached"], (size, stage)


@pytest.mark.parametrize(("size", "stage"), stages())
def test_the_hand_and_the_trick_fit_the_window(seen: dict[str, Any], size: str, stage: str) -> None:
    got = stage_of(seen, size, stage)
    view = {
        "left": 0,
        "top": 0,
        "right": got["viewport"]["width"],
        "bottom": got["viewport"]["height"],
    }
    assert got["page"]["scrollWidth"] <= got["viewport"]["width"], "the page scrolls sideways"
    assert got["hand"], "no hand"
    assert got["legal"] > 0, "not this seat's turn"
    for card in got["hand"] + got["actions"]:
        assert inside(card, view), f"a card or button of the hand is outside the window: {card}"
    if stage == "call":
        assert len(got["actions"]) >= 2
    felt = got["felt"]
    assert inside(felt, view), f"the felt is outside the window: {felt}"
    if stage == "trick":
        assert len(got["trick"]) >= 2
    for card in got["trick"] + got["rows"] + got["dead"]:
        assert inside(card, felt), f"a card is off the felt: {card}"
    for seat in got["seats"]:
        assert inside(seat["box"], felt), f"seat {seat['seat']} passes the felt: {seat}"
    for a in got["seats"]:
        for b in got["seats"]:
            if a["seat"] < b["seat"]:
                assert not overlap(a["box"], b["box"]), f"seats {a['seat']} and {b['seat']} overlap"
        for card in got["trick"] + got["rows"]:
            assert not overlap(a["box"], card), f"seat {a['seat']} covers a card on the table"
    if stage == "fantan":
        assert len(got["rows"]) >= 14
    if stage == "sixes":
        assert got["deadCount"] >= 3


@pytest.mark.parametrize(("size", "stage"), stages())
def test_every_rank_in_the_hand_shows_whole(seen: dict[str, Any], size: str, stage: str) -> None:
    for rank in stage_of(seen, size, stage)["ranks"]:
        assert rank["visible"] >= rank["width"] - SLACK, f"{rank['text']} is partly covered"


def test_the_ending_shows_placings_and_what_next(seen: dict[str, Any]) -> None:
    for record in seen["sizes"]:
        ending = record["ending"]
        assert len(ending["placings"]) == 3
        assert any("win" in line for line in ending["placings"])
        assert ending["buttons"][:3] == ["rematch", "new-match-link", "replay-link"]
        assert ending["scrollWidth"] <= ending["width"]


def test_a_replays_hands_stay_on_the_felt(seen: dict[str, Any]) -> None:
    """A replay shows every hand face up in its seat: wrapped within it, never past the felt,
    never over another seat."""
    for record in seen["sizes"]:
        replay = record["replay"]
        assert "log=" in replay["url"] and replay["faces"] > 10
        for rank in replay["ranks"]:
            assert rank["visible"] >= rank["width"] - SLACK, (record["name"], rank)
        assert replay["page"]["scrollWidth"] <= replay["viewport"]["width"]
        for seat in replay["seats"]:
            assert inside(seat["box"], replay["felt"]), (record["name"], seat)
        for a in replay["seats"]:
            for b in replay["seats"]:
                if a["seat"] < b["seat"]:
                    assert not overlap(a["box"], b["box"]), (record["name"], a, b)


def test_the_lobby_lists_the_newest_first_and_fits(seen: dict[str, Any]) -> None:
    for record in seen["sizes"]:
        lobby = record["lobby"]
        assert lobby["scrollWidth"] <= lobby["width"]
        assert lobby["rows"] and lobby["rows"] == sorted(lobby["rows"], reverse=True)


def test_an_unknown_match_says_what_to_do(seen: dict[str, Any]) -> None:
    for record in seen["sizes"]:
        unknown = record["unknown"]
        assert unknown["kind"] == "not-found"
        assert "no match nosuchmatch" in unknown["text"]
        assert "./" in unknown["links"]
        assert record["unknownTournament"] == "not-found"


def test_the_view_is_updated_in_place(seen: dict[str, Any]) -> None:
    """A move keeps the other cards of the hand as they were (the same elements, so their
    transitions run), and a redraw keeps the table's."""
    extras = seen["sizes"][0]["extras"]
    assert extras["handKept"] and all(extras["handKept"])
    assert extras["last"]["kept"]


def test_the_last_trick_on_demand(seen: dict[str, Any]) -> None:
    last = seen["sizes"][0]["extras"]["last"]
    assert last["cards"] == 5  # Hexathlon, five seats
    assert last["text"].startswith("Trick ") and "won by" in last["text"]
    assert seen["sizes"][0]["extras"]["closed"]


def test_the_log_of_a_running_match_offers_to_watch_it(seen: dict[str, Any]) -> None:
    running = seen["sizes"][0]["runningLog"]
    assert running["kind"] == "not-ended" and running["title"] == "This match is still being played"
    assert running["watching"]["url"].startswith("?match=") and running["watching"]["seats"] == 4


def test_a_practice_match_goes_on_in_a_new_tab(seen: dict[str, Any]) -> None:
    """The seat's link opened in a new tab, the first one closed: the same seat, and the
    bots (their tokens kept in localStorage) play on from the new tab."""
    taken = seen["sizes"][0]["takeOver"]
    assert taken["seat"] == "0"
    # Six entries on, this seat playing when its turn: three of them at least the bots' (its
    # card can end a trick it wins, so that it leads again before any bot plays).
    assert taken["moved"] >= 6
