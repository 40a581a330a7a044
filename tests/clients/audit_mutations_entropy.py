"""Mutations of the seats' contributed entropy (docs/rules.md §4.8): a contribution changed,
dropped, added, of the wrong size, or a deal that does not wait for the last seat."""

from __future__ import annotations

from cardarena.v1 import game_pb2 as pb

from .audit_support import Expected, contributed, edit, forge, mutation


def _first_deal() -> int:
    b = contributed()
    return min(b.seqs("dealt") + b.seqs("trump_drawn") + b.seqs("dealer_drawn"))


@mutation("re-signed: a seat's contribution")
def _changed() -> Expected:
    b = contributed()
    k = b.seqs("seat_joined")[0]
    return (
        edit(b, k, lambda e: setattr(e.seat_joined, "contribution", b"\x07" * 32)),
        "replay",
        _first_deal(),
    )


@mutation("re-signed: a contribution dropped")
def _dropped() -> Expected:
    b = contributed()
    k = b.seqs("seat_joined")[2]
    return edit(b, k, lambda e: e.seat_joined.ClearField("contribution")), "replay", _first_deal()


@mutation("re-signed: a contribution added")
def _added() -> Expected:
    b = contributed()
    k = b.seqs("seat_joined")[1]
    return (
        edit(b, k, lambda e: setattr(e.seat_joined, "contribution", b"\x01" * 32)),
        "replay",
        _first_deal(),
    )


@mutation("re-signed: a contribution of 31 bytes")
def _short() -> Expected:
    b = contributed()
    k = b.seqs("seat_joined")[0]
    return edit(b, k, lambda e: setattr(e.seat_joined, "contribution", b"\x07" * 31)), "seed", k


@mutation("re-signed: the deal before the last seat joined")
def _early_deal() -> Expected:
    b = contributed()
    events = b.events()
    k = b.seqs("seat_joined")[-1]
    last: pb.Event = events.pop(k - 1)
    events.insert(_first_deal() - 1, last)  # just after the deal
    return forge(b, events), "server", _first_deal() - 1
