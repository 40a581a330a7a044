"""A write with no private entry is told to every reader whole, without asking each kind of
reader's projection: that is right only while every other kind of entry is one that
``codec.project_pb`` hands back unchanged to everyone."""

from __future__ import annotations

from cardarena.server.hosting.subscribers import PRIVATE_KINDS
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb


def test_every_kind_but_the_private_ones_is_seen_whole_by_every_reader() -> None:
    kinds = [field.name for field in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields]
    assert PRIVATE_KINDS.issubset(kinds)
    for kind in kinds:
        if kind in PRIVATE_KINDS:
            continue
        event = pb.Event(seq=5)
        getattr(event, kind).SetInParent()
        for seat in (None, 0, 1, 2, 3):
            for voluntary in (False, True):
                assert codec.project_pb(event, seat, voluntary_pass=voluntary) is event, kind
