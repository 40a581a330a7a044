"""A tampered event's reason shows where its recorded and canonical forms differ: the first
differing field's path, and both forms from just before their first differing character
(or byte), never both cut at the same prefix.
"""

from __future__ import annotations

from cardarena.clients.audit import audit_log
from cardarena.clients.audit.canonical import around_difference

from . import audit_mutations_log  # noqa: F401  # registers the mutations used below
from .audit_support import MUTATIONS

# -- a tampered event's reason ---------------------------------------------------------------


def test_a_tampered_events_reason_shows_where_the_two_forms_differ() -> None:
    mutated, _, _ = MUTATIONS["re-signed: a dealt hand's size that is not its number of cards"]()
    failure = audit_log(mutated).failure
    assert failure is not None and failure.check == "decode"
    recorded, canonical = failure.reason.split("; canonical ")
    assert "not in canonical form at dealt.hands[2].size: recorded" in recorded
    assert "hands { size: 12 cards" in recorded and "hands { size: 13 cards" in canonical
    assert recorded.split("recorded ")[1].startswith("…")  # cut before, at the same place
    mutated, _, _ = MUTATIONS["re-signed: a dealt hand's cards out of their order"]()
    failure = audit_log(mutated).failure
    assert failure is not None
    assert "at dealt.hands[1].cards[0].rank:" in failure.reason


def test_a_non_canonical_encodings_reason_names_the_first_byte_that_differs() -> None:
    mutated, _, seq = MUTATIONS["re-signed: MatchEnded's winners not packed"]()
    failure = audit_log(mutated).failure
    assert failure is not None and failure.seq == seq
    assert "bytes are not its canonical encoding: they differ from byte 5 of 32" in failure.reason
    recorded, canonical = failure.reason.split(": recorded ")[1].split("; canonical ")
    assert recorded.split()[5] != canonical.split()[5]


def test_two_long_forms_are_shown_from_just_before_their_first_difference() -> None:
    same = " ".join(f"card {n}" for n in range(60))
    mine, theirs = around_difference(same + " size: 12 tail" * 20, same + " size: 13 tail" * 20)
    assert mine.startswith("…") and theirs.startswith("…")
    assert "size: 12" in mine and "size: 13" in theirs
    assert mine.endswith("…") and len(mine) <= 162
    assert around_difference("short", "shorter") == ("short", "shorter")
