"""The HTML replay in a real browser: Debian's Chromium, driven by playwright-core from npm.

The test clicks Next through every step of a match and compares what the page shows with
the log: every hand (which shrinks as cards are played), each trick with its leader and
winner, the Fan Tan table, the final totals and winners; then Previous, the keyboard and a
``?step=N`` link. The page must load nothing from the network and log no error.

Without Chromium the test is skipped, unless ``CARDARENA_REQUIRE_E2E=1`` (CI) makes that a
failure. With Chromium, Node and playwright-core are required: see
``browser.PLAYWRIGHT_INSTALL``.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.clients.replay import Timeline, build_timeline
from cardarena.engine import card_code, new_match
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb

from ..logs import log_from_engine, play_with_time_outs
from .browser import chromium, playwright_core, run_driver

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_replay.cjs")
NAMES = ("ann", "bob", "cy")
SEED = bytes(range(32))


def match_log() -> spb.GetMatchLogResponse:
    """A short Pentathlon (clubs, then Fan Tan) with some time-outs: tricks and a table."""
    match = new_match("pentathlon", players=3, seed=SEED, options={"rounds": ["clubs", "fan_tan"]})
    timed_out = play_with_time_outs(match, random.Random(5), 9)
    return log_from_engine(match, SEED, "e2e", names=NAMES, timed_out=timed_out, move_ms=1000)


def drive(page: Path) -> dict[str, Any]:
    browser, library = chromium(), playwright_core()
    node = shutil.which("node")
    if node is None:
        pytest.fail("Chromium is here but Node is not: apt-get install -y nodejs")
    return run_driver([node, str(DRIVER), str(library), browser, page.as_uri()])


def expected_hands(timeline: Timeline) -> list[list[list[str]]]:
    return [[[card_code(c) for c in hand] for hand in step.hands] for step in timeline.steps]


def test_clicking_through_the_replay_shows_the_match(tmp_path: Path) -> None:
    resp = match_log()
    log, page = tmp_path / "match.pb", tmp_path / "replay.html"
    save_log(resp, log)
    assert main(["replay", str(log), "--html", str(page)]) == 0
    timeline = build_timeline(resp)
    seen = drive(page)
    assert seen["requests"] == [], "the page must load nothing"
    assert seen["errors"] == []

    clicks = seen["clicks"]
    steps = timeline.steps
    assert [c["step"] for c in clicks] == list(range(1, len(steps) + 1))
    assert clicks[0]["prevDisabled"] and clicks[-1]["nextDisabled"]
    # Every hand at every step, from the Dealt events on: the full log shows them all.
    assert [c["hands"] for c in clicks] == expected_hands(timeline)
    sizes = [sum(len(h) for h in c["hands"]) for c in clicks]
    for before, after, step in zip(sizes, sizes[1:], steps[1:], strict=False):
        if step.what == "trick":
            assert after == before - 3, "a trick takes one card from each hand"
        elif step.what == "turn" and step.plays[0][1] != "pass":
            assert after == before - 1
        elif step.what != "deal":
            assert after == before

    tricks = [(c, s) for c, s in zip(clicks, steps, strict=True) if s.what == "trick"]
    assert len(tricks) == 17
    for shown, step in tricks:
        assert step.trick is not None
        assert shown["trick"]["leader"] == step.trick.leader
        assert shown["trick"]["winner"] == step.trick.winner
        assert shown["trick"]["highlighted"] == [step.trick.winner]
        assert f"won by {NAMES[step.trick.winner or 0]}" in shown["trick"]["caption"]
        assert [p[0] for p in shown["trick"]["plays"]] == [s for s, _ in step.plays]
    turns = [c for c, s in zip(clicks, steps, strict=True) if s.what == "turn"]
    assert "7H" in turns[0]["table"] and turns[0]["trick"]["leader"] is None

    final = clicks[-1]
    totals = [str(codec.score_from_pb(t)) for t in resp.match.totals]
    assert final["totals"] == totals
    assert final["scoreRows"] == 2
    assert final["winners"] == "Won by " + ", ".join(NAMES[w] for w in resp.match.winners)

    last = len(steps)
    assert seen["afterPrev"]["step"] == last - 1 and not seen["afterPrev"]["nextDisabled"]
    assert seen["home"]["step"] == 1 and seen["home"]["prevDisabled"]
    assert (seen["right"]["step"], seen["left"]["step"], seen["end"]["step"]) == (3, 2, last)
    assert seen["end"]["totals"] == totals
    assert seen["deepLink"]["step"] == 5 and seen["deepLink"]["hands"] == clicks[4]["hands"]
