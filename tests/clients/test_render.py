"""``cardarena replay``: the text rendering, the HTML page's structure, the exit codes.

The page's behaviour in a browser is tested in ``tests/e2e/test_replay_html.py``.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from pathlib import Path

import pytest

from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.clients.replay import build_timeline
from cardarena.engine import new_match
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash

from ..logs import log_from_engine, play_with_time_outs

SEED = bytes(range(32))


@cache
def played(game: str, players: int, names: tuple[str, ...] = ()) -> spb.GetMatchLogResponse:
    """A random match whose every seventh action was a time-out's default."""
    match = new_match(game, players=players, seed=SEED)
    timed_out = play_with_time_outs(match, random.Random(game), 7)
    return log_from_engine(
        match, SEED, f"{game}-r", names=names or None, timed_out=timed_out, move_ms=100
    )


def kinds(resp: spb.GetMatchLogResponse, kind: str) -> list[pb.Event]:
    events = [pb.Event.FromString(e.event) for e in resp.entries]
    return [e for e in events if e.WhichOneof("kind") == kind]


def write(resp: spb.GetMatchLogResponse, tmp_path: Path, name: str = "m.json") -> str:
    path = tmp_path / name
    save_log(resp, path)
    return str(path)


def test_text_shows_every_round_trick_play_and_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resp = played("hexathlon", 4, ("ann", "bob", "cy", "di"))
    assert main(["replay", write(resp, tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "hexathlon, 4 players, match hexathlon-r\nseats: 0 ann, 1 bob, 2 cy, 3 di"
    )
    assert "audit: clean" in out
    for n, kind in enumerate(["pass", "clubs", "queens", "fan_tan", "grand", "trumps"], 1):
        assert f"Round {n}: {kind}, dealer " in out
    tricks = re.findall(r"^  trick +(\d+)  led by (\w+): (.*) -> (\w+)$", out, re.M)
    assert len(tricks) == len(kinds(resp, "trick_won")) == 5 * 13
    first = kinds(resp, "trick_won")[0].trick_won
    names = ["ann", "bob", "cy", "di"]
    assert tricks[0][1] == names[first.leader] and tricks[0][3] == names[first.seat]
    assert tricks[0][2] == ", ".join(
        f"{names[(first.leader + i) % 4]} {c.code}" for i, c in enumerate(first.cards)
    )
    assert re.search(r"^  plays  \w+ 7H, ", out, re.M), "Fan Tan opens with 7H"
    assert " pass" in out and "(timed out)" in out
    assert out.count("\n  scores ") == 6 and out.count("\n  totals ") == 6
    ended = kinds(resp, "match_ended")[0].match_ended
    totals = ", ".join(f"{n} {t.numerator}" for n, t in zip(names, ended.totals, strict=True))
    assert f"final totals: {totals}" in out
    assert out.rstrip().endswith("won by " + ", ".join(names[w] for w in ended.winners))


def test_text_shows_dead_cards_and_trump_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", write(played("crazy_sixes", 3), tmp_path)]) == 0
    sixes = capsys.readouterr().out
    assert re.search(r"seat \d 6O", sixes) and "lays dead" in sixes
    assert main(["replay", write(played("triathlon", 3), tmp_path)]) == 0
    tri = capsys.readouterr().out
    assert re.search(
        r"^  trump  seat \d excludes [CDHS]; seat \d excludes [CDHS]; seat \d chooses trump [CDHS]$",
        tri,
        re.M,
    )
    assert "feats of round 1:" in tri and "JK" in tri


def test_a_log_that_fails_its_audit_is_still_shown_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resp = spb.GetMatchLogResponse()
    resp.CopyFrom(played("pentathlon", 3))
    won = next(e for e in resp.entries if pb.Event.FromString(e.event).HasField("trick_won"))
    event = pb.Event.FromString(won.event)
    event.trick_won.seat = (event.trick_won.seat + 1) % 3
    won.event = event.SerializeToString()
    prev = resp.entries[won.seq - 2].hash
    for entry in resp.entries[won.seq - 1 :]:
        entry.hash = prev = chain_hash(prev, entry.event)
    resp.match.last_hash = prev  # re-signed through MatchInfo: only the rules can tell
    assert main(["replay", write(resp, tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"audit: FAILED at seq {won.seq}: " in out and "Round 1: pass" in out


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nothing.pb")]) == 2
    assert "no such file" in capsys.readouterr().err


def page_data(page: str) -> dict[str, object]:
    found = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, object] = json.loads(found.group(1))
    return data


def test_the_html_page_is_self_contained_and_has_stable_hooks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resp = played("hexathlon", 4, ("</script><b>x", "bob & co", "cy", "di"))
    out = tmp_path / "replay.html"
    assert main(["replay", write(resp, tmp_path), "--html", str(out)]) == 0
    steps = len(build_timeline(resp).steps)
    assert capsys.readouterr().out == f"wrote {out}: {steps} steps; audit clean\n"
    page = out.read_text()
    # The SVG namespace of the shared card faces is a name, never fetched.
    network = r"https?://(?!www\.w3\.org/2000/svg\b)|<link|\bsrc=|@import|url\("
    assert not re.search(network, page), "no network at all"
    # One look with the live table: its stylesheet and card faces are inlined.
    web_dist = Path(__file__).resolve().parents[2] / "clients" / "web" / "dist"
    assert (web_dist / "table.css").read_text().replace("</", "<\\/") in page
    assert "CardarenaCards" in page
    for hook in ('id="step"', 'id="next"', 'id="prev"', 'id="trick"', 'id="scores"', 'id="totals"'):
        assert hook in page
    for seat in range(4):
        assert f'class="hand" data-seat="{seat}"' in page
    assert "</script><b>x" not in page and "&lt;/script&gt;&lt;b&gt;x" in page
    data = page_data(page)
    assert data["names"] == ["</script><b>x", "bob & co", "cy", "di"]
    assert isinstance(data["steps"], list) and len(data["steps"]) == steps
    assert f'data-steps="{steps}"' in page


def test_the_timeline_has_a_step_per_trick_and_per_solitaire_turn() -> None:
    resp = played("hexathlon", 4)
    timeline = build_timeline(resp)
    whats = [s.what for s in timeline.steps]
    assert whats.count("deal") == 6 and whats.count("scores") == 6 and whats[-1] == "end"
    assert whats.count("trick") == 5 * 13
    fan_tan_actions = [
        e
        for e in kinds(resp, "card_played") + kinds(resp, "passed")
        if e.seq > kinds(resp, "round_started")[3].seq
        and e.seq < kinds(resp, "round_started")[4].seq
    ]
    assert whats.count("turn") == len(fan_tan_actions)
    sizes = [sum(len(h) for h in s.hands) for s in timeline.steps if s.round == 0]
    assert sizes[0] == 52 and sizes == sorted(sizes, reverse=True) and sizes[-1] == 0


def cancelled_log() -> spb.GetMatchLogResponse:
    """A Triathlon cancelled by its creator after 20 actions."""
    match = new_match("triathlon", players=3, seed=SEED)
    rng = random.Random("cancel")
    for _ in range(20):
        seat = match.to_act
        assert seat is not None
        match.apply(seat, rng.choice(match.legal_actions()))
    return log_from_engine(
        match, SEED, "tri-c", names=["ann", "bob", "cy"], cancelled="cancelled by its creator: rain"
    )


def test_a_cancelled_match_shows_its_cancellation_in_text_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resp = cancelled_log()
    timeline = build_timeline(resp)
    last = timeline.steps[-1]
    assert last.what == "cancelled" and last.lines == [
        "match cancelled: cancelled by its creator: rain"
    ]
    assert "end" not in [s.what for s in timeline.steps]
    assert main(["replay", write(resp, tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "audit: clean" in out
    lines = out.rstrip().splitlines()
    assert lines[-3] == "match cancelled: cancelled by its creator: rain"
    assert lines[-2].startswith("totals at cancellation: ann ") and lines[-1] == "no winners"
    page = tmp_path / "cancelled.html"
    assert main(["replay", write(resp, tmp_path), "--html", str(page)]) == 0
    capsys.readouterr()
    steps = page_data(page.read_text())["steps"]
    assert isinstance(steps, list)
    assert steps[-1]["what"] == "cancelled" and steps[-1]["label"] == "the match is cancelled"
    assert steps[-1]["lines"] == ["match cancelled: cancelled by its creator: rain"]
    assert steps[-1]["winners"] == []
