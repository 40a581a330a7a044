"""A tournament's pairing design between the protocol (``Pairings``) and
:mod:`cardarena.competition.pairings`: one translation for the server that plans and the
auditor that recomputes the plan."""

from __future__ import annotations

from cardarena.competition import BALANCED, EVERY_LINEUP, GAUNTLET, Design
from cardarena.v1 import tournament_pb2 as tpb

KIND_OF = {
    tpb.PAIRING_KIND_UNSPECIFIED: EVERY_LINEUP,
    tpb.PAIRING_KIND_EVERY_LINEUP: EVERY_LINEUP,
    tpb.PAIRING_KIND_BALANCED: BALANCED,
    tpb.PAIRING_KIND_GAUNTLET: GAUNTLET,
}
VALUE_OF = {kind: value for value, kind in KIND_OF.items() if value}


def design_of(pairings: tpb.Pairings) -> Design:
    """The design ``pairings`` names (not checked against a tournament: :meth:`Design.check`);
    ValueError for a kind this version does not know."""
    kind = KIND_OF.get(pairings.kind)
    if kind is None:
        raise ValueError(f"pairings.kind: unknown value {pairings.kind}")
    return Design(kind, pairings.candidates)


def pairings_of(design: Design) -> tpb.Pairings:
    """The message for ``design``, its kind never UNSPECIFIED."""
    return tpb.Pairings(kind=VALUE_OF[design.kind], candidates=design.candidates)
