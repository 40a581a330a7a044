"""The auditor: clean logs of every game pass, every tampering is caught at the right seq.

Mutations come in two kinds. A raw one changes the stored log and leaves the hashes alone,
as a careless or lazy forger would. A re-signed one (``forge``/``edit``) recomputes every
hash from the change on, so the chain is internally valid and only the checks behind it (the
seed, the rules, the server's own events, MatchInfo) can catch it. The mutations are named in
``audit_mutations_log``, ``audit_mutations_play`` and ``audit_mutations_start``; MatchInfo's
fields, cancelled matches and the command have modules of their own (``test_audit_*``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardarena.clients.audit import CHECKS, audit_log
from cardarena.clients.cli import main
from cardarena.clients.logs import save_log
from cardarena.engine import GAMES
from cardarena.v1 import game_pb2 as pb

from . import (
    audit_mutations_entropy,
    audit_mutations_log,
    audit_mutations_play,
    audit_mutations_start,
)
from .audit_support import (
    MUTATIONS,
    Base,
    base,
    base_one_deal,
    contributed,
    edit,
    edit_raw,
    flip,
    forge,
    hexa,
)

MUTATION_MODULES = (
    audit_mutations_entropy,
    audit_mutations_log,
    audit_mutations_play,
    audit_mutations_start,
)
"""Imported for their mutations, which each registers in ``MUTATIONS``."""


# -- the tests ---------------------------------------------------------------------------------

GAME_COUNTS = [(g, p) for g in GAMES for p in GAMES[g].players]


@pytest.mark.parametrize(("game", "players"), GAME_COUNTS)
def test_a_clean_log_of_every_game_passes_every_check(game: str, players: int) -> None:
    b = base(game, players)
    report = audit_log(b.resp)
    assert report.ok, report.failure
    assert report.passed == [name for name, _ in CHECKS]
    assert report.totals == [str(t) for t in b.match.totals]
    assert report.winners == list(b.match.winners)
    assert b.seqs("timed_out"), "the log should exercise the time-out check"


def test_a_log_dealt_from_contributed_entropy_passes_and_is_not_the_seeds_deal() -> None:
    b = contributed()
    report = audit_log(b.resp)
    assert report.ok, report.failure
    # The same log claiming no contributions fails: the deals are the mixed seed's.
    events = b.events()
    for seq in b.seqs("seat_joined"):
        events[seq - 1].seat_joined.ClearField("contribution")
    assert audit_log(forge(b, events)).failure is not None


def test_a_log_without_time_outs_or_clock_passes() -> None:
    b = base("crazy_sixes", 3)
    events = [e for e in b.events() if e.WhichOneof("kind") != "timed_out"]
    events[0].match_started.move_ms = 0
    out = forge(b, events)
    out.match.time_control.move_ms = 0
    for seat in out.match.seats:  # no time-out, no fault
        seat.faults = 0
    assert audit_log(out).ok


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_every_mutation_is_caught_at_the_right_seq(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutated, check, seq = MUTATIONS[name]()
    report = audit_log(mutated)
    assert report.failure is not None, f"{name}: not caught"
    checks = {check} if isinstance(check, str) else check
    assert report.failure.check in checks, report.failure
    assert report.failure.seq == seq, report.failure
    # The command says the same, with exit code 1, from a file of either format.
    path = tmp_path / "mutated.pb"
    save_log(mutated, path)
    assert main(["audit", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False
    assert out["failure"] == {
        "check": report.failure.check,
        "seq": seq,
        "reason": report.failure.reason,
    }


def test_a_re_signed_alternative_history_is_caught_by_a_trusted_head() -> None:
    """Triathlon's first exclusion can often change without consequence: a forger who
    re-signs the chain leaves nothing for the rules to find, but the head hash moves."""
    b = base("triathlon", 3)
    k = b.seqs("suit_excluded")[0]
    trump = b.events()[b.seqs("trump_chosen")[0] - 1].trump_chosen.suit
    second = b.events()[k].suit_excluded.suit
    spare = next(
        s for s in range(1, 5) if s not in (trump, second, b.events()[k - 1].suit_excluded.suit)
    )
    forged = edit(b, k, lambda e: setattr(e.suit_excluded, "suit", spare))
    assert audit_log(forged).ok  # consistent with the rules: no auditor can tell
    report = audit_log(forged, head=b.resp.entries[-1].hash)
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("chain", b.last)
    assert audit_log(b.resp, head=b.resp.entries[-1].hash).ok


def flips(b: Base, masks: tuple[int, ...], *, every_entry: bool) -> list[tuple[int, int, int]]:
    """The single-byte flips, re-signed, that the audit does NOT catch: in every entry, or in
    the first entry of each kind."""
    missed = []
    kinds: set[str | None] = set()
    for k, entry in enumerate(b.resp.entries, start=1):
        kind = pb.Event.FromString(entry.event).WhichOneof("kind")
        if not every_entry and kind in kinds:
            continue
        kinds.add(kind)
        for at in range(len(entry.event)):
            for mask in masks:
                forged = edit_raw(b, k, lambda raw: flip(raw, at, mask))  # noqa: B023
                if audit_log(forged).ok:
                    missed.append((k, at, mask))
    return missed


def consequence_free(b: Base, missed: list[tuple[int, int, int]]) -> bool:
    """Each uncaught flip turned one Triathlon exclusion into another legal one, and a
    trusted head hash catches it."""
    for k, at, mask in missed:
        forged = edit_raw(b, k, lambda raw: flip(raw, at, mask))  # noqa: B023
        if pb.Event.FromString(forged.entries[k - 1].event).WhichOneof("kind") != "suit_excluded":
            return False
        if audit_log(forged, head=b.resp.entries[-1].hash).ok:
            return False
    return True


def test_every_byte_flip_in_each_kind_of_event_of_a_re_signed_log_is_caught() -> None:
    b = base_one_deal()
    missed = flips(b, (0x01, 0x80), every_entry=False)
    assert consequence_free(b, missed), missed


@pytest.mark.slow
def test_every_byte_flip_of_a_re_signed_log_is_caught() -> None:
    b = base_one_deal()
    missed = flips(b, (0x01, 0xFF), every_entry=True)
    assert consequence_free(b, missed), missed


def test_the_replay_reason_names_cards_by_code() -> None:
    mutated, _, seq = MUTATIONS["re-signed: a trick winner"]()
    report = audit_log(mutated)
    assert report.failure is not None and report.failure.seq == seq
    assert "the log records: trick" in report.failure.reason
    assert "the rules give: trick" in report.failure.reason
    assert "won by seat" in report.failure.reason


def test_auditing_as_another_match_breaks_the_chain_at_seq_1() -> None:
    report = audit_log(hexa().resp, match_id="another")
    assert report.failure is not None
    assert (report.failure.check, report.failure.seq) == ("chain", 1)
