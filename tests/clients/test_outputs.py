"""Consistent outputs: a number is a number in every JSON the clients write (the totals as
numbers with their exact values beside them, options as the whole numbers they are), and a
log or tournament file read back is the same message.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.audit import audit_log, report_json
from cardarena.clients.audit.tournament import TournamentAudit
from cardarena.clients.cli import main
from cardarena.clients.logs import load_log, save_log
from cardarena.clients.logs.bundle import load_tournament, save_tournament
from cardarena.clients.logs.text import totals_json
from cardarena.clients.tournament.hosted_report import hosted_json
from cardarena.clients.tournament.ranking import rank
from cardarena.clients.tournament.reports import to_json
from cardarena.engine import new_match
from cardarena.v1 import codec
from cardarena.v1 import tournament_pb2 as tpb

from ..helpers import play_out
from ..logs import log_from_engine
from .audit_support import base_one_deal
from .test_standings import tournament

NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
HEX_TEXT = frozenset({"seed", "seed_commitment", "last_hash"})
"""Fields of bytes written as hex, which may happen to be all digits."""


def numbers_are_numbers(value: Any, key: str = "") -> None:
    """No number is written as text anywhere in ``value`` (a JSON document), and no whole
    number as a float; ``totals_exact`` holds only integers and ``"p/q"`` fractions."""
    if isinstance(value, dict):
        for name, item in value.items():
            numbers_are_numbers(item, name)
    elif isinstance(value, list):
        for item in value:
            numbers_are_numbers(item, key)
    elif isinstance(value, str) and key not in HEX_TEXT:
        assert not NUMBER_TEXT.fullmatch(value), f"{key}: the number {value!r} as text"
        if key == "totals_exact":
            assert re.fullmatch(r"-?\d+/\d+", value), f"{key}: {value!r}"
    elif key in ("totals", "options") and isinstance(value, float):
        assert not value.is_integer(), f"{key}: the whole number {value} as a float"


@pytest.fixture(scope="module")
def sixes() -> Any:
    """A Crazy Sixes log whose totals share a pool: 205/2, 99/2 and 88."""
    match = new_match("crazy_sixes", players=3, seed=bytes(32))
    play_out(match, rng_seed=0)
    assert [t for t in match.totals if isinstance(t, Fraction) and t.denominator > 1]
    return match, log_from_engine(match, bytes(32), "sixes", names=["a", "b", "c"])


# -- numbers are numbers -----------------------------------------------------------------------


def test_a_total_is_a_number_and_exact_beside_it() -> None:
    assert totals_json([3, Fraction(7, 2), Fraction(-4, 1)]) == {
        "totals": [3, 3.5, -4],
        "totals_exact": [3, "7/2", -4],
    }
    assert type(totals_json([Fraction(88, 1)])["totals"][0]) is int


def test_the_audit_json_writes_totals_as_numbers(
    sixes: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match, resp = sixes
    report = audit_log(resp)
    assert report.ok, report.failure
    assert report.totals == [str(t) for t in match.totals]  # the text form is unchanged
    path = tmp_path / "sixes.pb"
    save_log(resp, path)
    assert main(["audit", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == json.loads(json.dumps(report_json(report, str(path))))
    assert out["totals"] == [102.5, 49.5, 88] and out["totals_exact"] == ["205/2", "99/2", 88]
    assert [Fraction(t) for t in out["totals_exact"]] == list(match.totals)
    numbers_are_numbers(out)
    numbers_are_numbers(TournamentAudit("t1", matches=2, audited=2).as_json())


def hosted_info() -> tpb.TournamentInfo:
    """A hosted tournament's info as the server sends it, with every number kind in it."""
    info = tpb.TournamentInfo(
        tournament_id="t1",
        game="crazy_sixes",
        players=3,
        options=codec.struct_of({"max_deals": 50, "first_dealer": 0}),
        entrants=["a", "b", "c"],
        deals=1,
        status=tpb.TOURNAMENT_STATUS_ENDED,
        planned=3,
        finished=3,
        seed_commitment="ab" * 32,
        seed=bytes(range(32)),
    )
    for place, name in enumerate(["a", "b", "c"]):
        info.standings.add(
            entrant=name,
            matches=3,
            groups=2,
            mean=60.5 - place,
            has_mean=True,
            ci_low=50.0 - place,
            ci_high=71.0 - place,
            has_interval=True,
            wins=1.0,
            win_rate=1 / 3,
            mu=25.0 - place,
            sigma=8.0,
            faults=place,
            timeouts=place,
            forfeits=0,
        )
    totals = [codec.score_to_pb(t) for t in (Fraction(205, 2), Fraction(99, 2), 88)]
    info.matches.add(index=0, match_id="m0", entrants=["a", "b", "c"], totals=totals, winners=[1])
    return info


def test_a_results_file_writes_numbers_and_whole_options(tmp_path: Path) -> None:
    report = json.loads(json.dumps(hosted_json(hosted_info(), server="localhost:1")))
    numbers_are_numbers(report)
    assert report["tournament"]["options"] == {"first_dealer": 0, "max_deals": 50}
    assert type(report["tournament"]["options"]["max_deals"]) is int
    match = report["matches"][0]
    assert (match["totals"], match["totals_exact"]) == ([102.5, 49.5, 88], ["205/2", "99/2", 88])


def test_the_runners_report_writes_numbers() -> None:
    whole = tournament()
    whole.matches[0].totals = (Fraction(3, 2), 2, 3)
    report = json.loads(json.dumps(to_json(whole, rank(whole), {"seed": "00"})))
    numbers_are_numbers(report)
    assert report["matches"][0]["totals_exact"] == ["3/2", 2, 3]


def test_a_log_file_writes_whole_options_as_integers_and_reads_back_the_same_log(
    tmp_path: Path,
) -> None:
    resp = base_one_deal().resp
    assert resp.match.options["max_deals"] == 1.0  # a Struct's double
    path = tmp_path / "one.json"
    save_log(resp, path)
    text = path.read_text()
    assert '"max_deals": 1,' in text or '"max_deals": 1\n' in text, text[:400]
    numbers_are_numbers(json.loads(text)["match"]["options"], "options")
    again = load_log(path)
    # The same message, byte for byte: no hash, chain or signature can tell the difference.
    assert again.SerializeToString(deterministic=True) == resp.SerializeToString(deterministic=True)
    assert audit_log(again).ok


def test_a_tournament_file_writes_whole_options_as_integers(tmp_path: Path) -> None:
    info = hosted_info()
    path = save_tournament(info, tmp_path, "json")
    data = json.loads(path.read_text())
    assert data["options"] == {"first_dealer": 0, "max_deals": 50}
    assert type(data["options"]["max_deals"]) is int
    assert load_tournament(path) == info
