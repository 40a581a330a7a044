"""The web app's table, in headless Chromium, through the gRPC-Web gateway.

One browser session plays a full match of every game against the page's bots by clicking
the highlighted cards (a few moves by keyboard), Triathlon's suit exclusion and trump choice
included; shows a refusal relayed as the gateway sends one (the reason, the cards still
playable); reloads the Pentathlon mid-match and carries on in the same seat; watches that
match live from a second page (hidden hands only as card backs; the trick and the score
sheet update); then steps the Hexathlon's replay by trick and jumps to a round from its
score sheet. Every table shown must end with the totals GetMatch reports. Screenshots of
each game's table go to test-artifacts/screenshots/ (git-ignored; CI may keep the folder). Small options keep it to
about a minute. Skipped without Chromium or Node, unless ``CARDARENA_REQUIRE_E2E=1``.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from tests.calls import stub
from tests.serverproc import ServerProcess

from .browser import REPO, find_chromium, playwright_core, run_driver, skip_unless_required

pytestmark = pytest.mark.e2e

DRIVER = Path(__file__).with_name("drive_table.cjs")
SHOTS = REPO / "test-artifacts" / "screenshots"
PLAN: list[dict[str, Any]] = [
    {
        "game": "pentathlon",
        "players": 4,
        "fields": {"rounds": "pass, fan_tan"},
        "watch": True,
        "reloadAfter": 6,
        "keyboard": True,
        "refuseOnce": True,
    },
    {
        "game": "hexathlon",
        "fields": {"rounds": "fan_tan, pass", "fan_tan.openers": "seven", "pass.multiplier": 2},
        "players": 5,
        "replay": True,
    },
    {
        "game": "heptathlon",
        "players": 5,
        "fields": {"rounds": "trumps(multiplier=2, trump=fixed S)"},
    },
    {"game": "crazy_sixes", "fields": {"target_score": 1}, "shotAfter": 4},
    {
        "game": "triathlon",
        "fields": {"max_deals": 2, "first_dealer": 0},
        "shotAfter": 5,
        # Deal 1: seat 0 deals and chooses trump; deal 2 (if the game goes on): it names a
        # suit to exclude. Should the game end after one deal, another match from seat 2.
        "needActions": ["chooseTrump", "excludeSuit"],
        "retryFields": [{"first_dealer": 2}, {"first_dealer": 2}],
    },
]


def tools() -> tuple[str, str]:
    browser, node = find_chromium(), shutil.which("node")
    if not (browser and node):
        message = "the web e2e test needs Chromium and Node (apt-get install -y chromium nodejs)"
        skip_unless_required(message, "them")
    return browser, node


async def ended(address: str, ids: list[str]) -> dict[str, spb.MatchInfo]:
    async with grpc.aio.insecure_channel(address) as channel:
        found = {}
        for match_id in ids:
            request = spb.GetMatchRequest(match_id=match_id)
            found[match_id] = (await stub(channel).GetMatch(request, timeout=10)).match
        return found


async def openers(address: str, match_id: str) -> list[int]:
    """The seat that made each round's first move, from the match's full log."""
    async with grpc.aio.insecure_channel(address) as channel:
        request = spb.GetMatchLogRequest(match_id=match_id)
        log = await stub(channel).GetMatchLog(request, timeout=10)
    out: list[int] = []
    rounds = 0
    for entry in log.entries:
        event = pb.Event.FromString(entry.event)
        kind = event.WhichOneof("kind")
        rounds += kind == "round_started"
        if kind == "card_played" and len(out) < rounds:
            out.append(event.card_played.seat)
    return out


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    browser, node = tools()
    library = playwright_core()
    SHOTS.mkdir(parents=True, exist_ok=True)
    data = tmp_path_factory.mktemp("table") / "data"
    with ServerProcess(data, web="127.0.0.1:0") as server:
        base = f"http://{server.web_address}"
        result = run_driver(
            [node, str(DRIVER), str(library), browser, base, str(SHOTS), json.dumps(PLAN)]
        )
        matches = asyncio.run(ended(server.address, [g["match"] for g in result["games"]]))
        watched = next(g["match"] for g in result["games"] if g.get("watchedTurns"))
        result["openers"] = asyncio.run(openers(server.address, watched))
    result["matches"] = matches
    result["by_game"] = {g["game"]: g for g in result["games"]}
    return result


def test_every_game_is_played_to_its_end_by_clicking(seen: dict[str, Any]) -> None:
    assert seen["errors"] == []
    assert [g["game"] for g in seen["games"]] == [entry["game"] for entry in PLAN]
    for record in seen["games"]:
        match = seen["matches"][record["match"]]
        assert match.status == spb.MATCH_STATUS_ENDED, record["game"]
        assert record["final"]["over"] and record["final"]["error"] == ""
        assert record["final"]["totals"] == [str(codec.score_from_pb(t)) for t in match.totals]
        assert record["final"]["winners"].startswith("Won by")
        assert record["final"]["roundRows"] >= 1
        assert record["clicks"] + record["keys"] > 0
        assert (SHOTS / f"{record['game']}-table.png").stat().st_size > 10_000


def test_a_seat_plays_by_keyboard_too(seen: dict[str, Any]) -> None:
    assert seen["by_game"]["pentathlon"]["keys"] == 3


def test_triathlon_offers_each_suit_call_as_its_own_action(seen: dict[str, Any]) -> None:
    triathlon = seen["by_game"]["triathlon"]
    assert triathlon["allActions"].get("chooseTrump", 0) >= 1
    assert triathlon["allActions"].get("excludeSuit", 0) >= 1
    assert triathlon["final"]["trump"].startswith("Trump:")


def test_crazy_sixes_draws_spanish_suits_and_its_rows(seen: dict[str, Any]) -> None:
    sixes = seen["by_game"]["crazy_sixes"]["midway"]
    assert sixes["spanishPips"] > 0
    assert sixes["rows"], "no rows on the table"
    assert {row["suit"] for row in sixes["rows"]} <= set("OCEB")
    assert all(any(code.startswith("6") for code in row["cards"]) for row in sixes["rows"])


def test_fan_tan_shows_its_rows(seen: dict[str, Any]) -> None:
    fan_tan = seen["by_game"]["hexathlon"]["midway"]
    assert fan_tan["round"].endswith("Fan Tan")
    assert fan_tan["rows"] and {row["suit"] for row in fan_tan["rows"]} <= set("CDHS")


def test_a_reload_keeps_the_seat_and_the_match_carries_on(seen: dict[str, Any]) -> None:
    reloaded = seen["by_game"]["pentathlon"]["reloaded"]
    assert "seat=0" in reloaded["url"]
    assert reloaded["after"] > 0 and reloaded["after"] in (
        reloaded["before"],
        reloaded["before"] - 1,
    )


def test_a_spectator_sees_card_backs_the_trick_and_the_score_sheet(seen: dict[str, Any]) -> None:
    pentathlon = seen["by_game"]["pentathlon"]
    middle = pentathlon["watchedMid"]
    assert middle["hand"] == []  # no hand of its own
    assert all(s["hidden"] and s["faces"] == 0 for s in middle["seats"])
    assert sum(s["backs"] for s in middle["seats"]) > 0
    assert middle["played"] and middle["trick"] is not None
    end = pentathlon["watchedEnd"]
    assert end["totals"] == pentathlon["final"]["totals"]
    assert end["roundRows"] == pentathlon["final"]["roundRows"] >= 1


def test_a_spectator_sees_whose_turn_it_is_when_fan_tan_starts(seen: dict[str, Any]) -> None:
    """No event names Fan Tan's first player (who holds 7H): the spectator's table marks the
    seat to act, its clock counting down, from the server's Turn, before any card is down."""
    timeline = seen["by_game"]["pentathlon"]["watchedTurns"]
    start = [e for e in timeline if e["round"].endswith("Fan Tan") and e["onTable"] == 0]
    assert start, f"the spectator never drew the Fan Tan round before its first card: {timeline}"
    assert start[-1]["toAct"] == seen["openers"][1], start
    assert re.fullmatch(r"\d+s", start[-1]["clock"]), start[-1]
    later = [e for e in timeline if e["round"].endswith("Fan Tan") and 0 < e["onTable"] < 52]
    assert len({e["toAct"] for e in later}) > 1, "the turn moves on as the round is played"


def test_a_replay_steps_by_trick_and_jumps_to_a_round(seen: dict[str, Any]) -> None:
    replay = seen["replay"]
    steps = [s["step"] for s in replay["steps"]]
    assert steps == sorted(set(steps)) and len(steps) == 5
    assert replay["verdict"]["ok"] == "true", replay["verdict"]
    assert replay["jumped"]["rows"] == 1  # the end of round 1: its row, nothing after
    assert replay["nextRound"]["step"] > replay["jumped"]["step"]


def test_the_new_match_form_fills_defaults_and_names_a_bad_option(seen: dict[str, Any]) -> None:
    form = seen["form"]
    assert form["defaults"] == "pass, clubs, queens, fan_tan, grand"  # Pentathlon's, from ListGames
    assert "unknown round nonsense" in form["error"]
    assert "match=" not in form["url"]


def test_the_form_sets_each_round_types_options(seen: dict[str, Any]) -> None:
    """Every round type's options (an object in ListGames' schema) get a group of fields; one
    out of bounds is named next to its field; those set reach the match, the rest default."""
    form = seen["form"]
    kinds = {"pass", "clubs", "queens", "fan_tan", "grand", "trumps", "finale"}  # Pentathlon's
    assert sorted(form["roundTypes"]) == sorted(kinds)
    assert form["trumpChoices"] == ["random", "fixed C", "fixed D", "fixed H", "fixed S"]
    assert form["roundTypeError"] == "between 0 and 1000" and form["reopened"]
    assert "match=" not in form["urlAfter"]
    options = dict(seen["matches"][seen["by_game"]["hexathlon"]["match"]].options)
    assert options["fan_tan"]["openers"] == "seven"  # Hexathlon's default is six_and_seven
    assert options["pass"]["multiplier"] == 2
    assert options["clubs"]["multiplier"] == 1


def test_the_list_of_rounds_takes_each_rounds_own_options(seen: dict[str, Any]) -> None:
    """ "trumps(multiplier=2, trump=fixed S)": that one round's options, checked against the
    schema's items (an unknown one is named), reach the match and its table."""
    assert seen["form"]["itemError"] == (
        "queens has no option bogus: one of multiplier, points_per_queen"
    )
    heptathlon = seen["by_game"]["heptathlon"]
    options = json_format.MessageToDict(seen["matches"][heptathlon["match"]].options)
    assert options["rounds"] == [
        {"type": "trumps", "multiplier": 2, "trump": {"mode": "fixed", "suit": "S"}}
    ]
    assert heptathlon["final"]["trump"].endswith("fixed by the options")


def test_a_refused_action_says_why_and_the_cards_stay_playable(seen: dict[str, Any]) -> None:
    refused = seen["by_game"]["pentathlon"]["refused"]
    assert refused["text"] == "Refused: not your turn: seat 2 is to act"
    assert refused["legal"] > 0
