"""Mutations of the seats' contributed entropy (docs/rules.md §4.8): a contribution changed,
dropped, added, of the wrong size, or a deal that does not wait for the last seat."""

from __future__ import annotations

from cardarena.v1 import game_pb2 as pb

from .audit_support import Expected, contributed, edit, forge, mutation


def _first_deal() -> int:
    b = contributed()
    return min(b.seqs("dealt") + b.seqs("trump_drawn") + b.seqs("dealer_drawn"))


def _contributing(join: int, contribution: bytes | None) -> Expected:
    """The ``join``-th SeatJoined with another contribution (``None``: none), re-signed."""
    b = contributed()
    k = b.seqs("seat_joined")[join]

    def change(e: pb.Event) -> None:
        if contribution is None:
            e.seat_joined.ClearField("contribution")
        else:
            e.seat_joined.contribution = contribution

    # A wrong size is the seed check's; any other change moves every deal (the replay's).
    wrong = contribution is not None and len(contribution) != 32
    return edit(b, k, change), "seed" if wrong else "replay", k if wrong else _first_deal()


@mutation("re-signed: a seat's contribution")
def _changed() -> Expected:
    return _contributing(0, b"\x07" * 32)


@mutation("re-signed: a contribution dropped")
def _dropped() -> Expected:
    return _contributing(2, None)


@mutation("re-signed: a contribution added")
def _added() -> Expected:
    return _contributing(1, b"\x01" * 32)


@mutation("re-signed: a contribution of 31 bytes")
def _short() -> Expected:
    return _contributing(0, b"\x07" * 31)


@mutation("re-signed: the deal before the last seat joined")
def _early_deal() -> Expected:
    b = contributed()
    events = b.events()
    k = b.seqs("seat_joined")[-1]
    last: pb.Event = events.pop(k - 1)
    events.insert(_first_deal() - 1, last)  # just after the deal
    return forge(b, events), "server", _first_deal() - 1
