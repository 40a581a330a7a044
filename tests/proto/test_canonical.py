"""The canonical form the results signature covers: every set field, unambiguous, and what a
verifier in another language needs to rebuild it (docs/signatures.md)."""

from __future__ import annotations

from cardarena.v1 import codec
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.signed import canonical, results_message, unknown_fields_in


def test_a_negative_zero_is_not_the_default() -> None:
    """protobuf writes -0.0 on the wire; the canonical form keeps it apart from 0.0 too."""
    zero, negative = tpb.Standing(entrant="a", mean=0.0), tpb.Standing(entrant="a", mean=-0.0)
    assert zero.SerializeToString() != negative.SerializeToString()
    assert canonical(zero) != canonical(negative)


def test_every_set_field_changes_the_bytes_and_unset_ones_do_not() -> None:
    info = tpb.TournamentInfo(tournament_id="t", game="triathlon", planned=3)
    base = canonical(info)
    for change in (
        lambda i: setattr(i, "planned", 4),
        lambda i: i.options.CopyFrom(codec.struct_of({"max_deals": 3})),
        lambda i: i.standings.add(entrant="a"),
        lambda i: setattr(i, "void_matches", 1),
        lambda i: i.time_control.SetInParent(),  # present, though empty
    ):
        changed = tpb.TournamentInfo()
        changed.CopyFrom(info)
        change(changed)
        assert canonical(changed) != base
    assert canonical(tpb.TournamentInfo(tournament_id="t", game="triathlon", planned=3)) == base


def test_a_maps_entries_are_in_key_order_whatever_order_they_were_set_in() -> None:
    one = codec.struct_of({"b": 1, "a": 2})
    other = codec.struct_of({"a": 2, "b": 1})
    assert canonical(one) == canonical(other)
    assert canonical(one) != canonical(codec.struct_of({"a": 1, "b": 2}))


def test_fields_a_newer_server_wrote_are_noticed_not_dropped_silently() -> None:
    info = tpb.TournamentInfo(tournament_id="t")
    newer = tpb.TournamentInfo.FromString(info.SerializeToString() + bytes([0xF8, 0x07, 0x01]))
    assert results_message(newer, "k") == results_message(info, "k")  # dropped by canonical
    assert unknown_fields_in(newer) and not unknown_fields_in(info)
    nested = tpb.TournamentInfo()
    nested.standings.add().MergeFromString(bytes([0xF8, 0x07, 0x01]))
    assert unknown_fields_in(nested)
