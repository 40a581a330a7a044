"""The tensors written the slow, plain way, for the tests to hold the fast encoder to: every
piece from the engine's ``view`` of the match and the log as ``Projector`` shows it to the
viewer, into a new zeroed array, nothing kept between calls.

Also what a seat may see, to check every card a tensor shows against it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cardarena.clients.interop.encoding import Encoding
from cardarena.engine import SPECTATOR, Match, Projector, view
from cardarena.engine.events import CardPlayed, Dealt, RoundStarted

from ..engine.properties_support import numbered_by

CARD_PIECES = ("hand", "trick", "taken", "table", "dead", "played", "dealt")


def reference_tensor(encoding: Encoding, match: Match, seat: int) -> Any:
    """``seat``'s tensor in ``encoding`` (the public one if the encoding is not private)."""
    layout = encoding.layout
    c, base = layout.cards, layout.base
    out = np.zeros(encoding.size, np.float32)
    viewer: int | str = seat if encoding.private else SPECTATOR
    v = view(match, viewer)  # type: ignore[arg-type]
    piece = {
        name: out[encoding.offset[name] : encoding.offset[name] + size]
        for name, size in encoding.pieces
    }

    def cards(name: str, row: int, mask: int) -> None:
        for card in range(128):
            if mask >> card & 1:
                piece[name][row * c + card - base] = 1.0

    if encoding.private:
        piece["viewer"][seat] = 1.0
        hand = v.hands[seat]
        cards("hand", 0, 0 if hand is None else hand.mask)
    if v.to_act is not None:
        piece["to_act"][v.to_act] = 1.0
    piece["dealer"][v.dealer] = 1.0
    if v.kind in layout.kinds:
        piece["kind"][layout.kinds.index(v.kind)] = 1.0
    piece["trump"][4 if v.trump is None else v.trump] = 1.0
    for s, size in enumerate(v.hand_sizes):
        piece["hand_sizes"][s] = size / c
    for position, card in enumerate(v.trick):
        piece["trick"][position * c + card - base] = 1.0
    if v.trick_leader is not None:
        piece["leader"][v.trick_leader] = 1.0
    for s, count in enumerate(v.tricks_won):
        piece["tricks_won"][s] = count / c
    for s, taken in enumerate(v.taken):
        cards("taken", s, taken.mask)
    for suit in v.excluded_suits:
        piece["excluded"][suit] = 1.0
    cards("table", 0, v.table.mask)
    for s, count in enumerate(v.passes):
        piece["passes"][s] = count / c
    for s, dead in enumerate(v.dead):
        cards("dead", s, dead.mask)
    for s, count in enumerate(v.placed):
        piece["placed"][s] = count / c
    for s, total in enumerate(v.totals):
        piece["totals"][s] = float(total) / layout.scale
    if encoding.recall:
        projector = Projector(viewer)  # type: ignore[arg-type]
        plays = 0
        for event in map(projector.project, _round(match)):
            if isinstance(event, CardPlayed):
                plays += 1
                cards("played", event.seat, 1 << event.card)
                piece["order"][event.card - base] = plays / c
            elif isinstance(event, Dealt) and encoding.private:
                hand = event.hands[seat]
                cards("dealt", 0, 0 if hand is None else hand.mask)
    return out


def _round(match: Match) -> list[Any]:
    """The current round's events, from its ``RoundStarted`` on (all of them before one)."""
    log = match.log
    start = len(log)
    while start > 0 and not isinstance(log[start - 1], RoundStarted):
        start -= 1
    return log[max(start - 1, 0) :]


def shown_cards(encoding: Encoding, tensor: Any) -> dict[str, set[int]]:
    """The card ids each card piece of ``tensor`` shows."""
    layout = encoding.layout
    c, base = layout.cards, layout.base
    out: dict[str, set[int]] = {}
    for name, size in encoding.pieces:
        if name in CARD_PIECES:
            start = encoding.offset[name]
            rows = np.asarray(tensor[start : start + size]).reshape(-1, c)
            out[name] = {int(k) + base for k in np.flatnonzero(rows.any(axis=0))}
    return out


def hidden_from(match: Match, seat: int | None) -> set[int]:
    """The cards ``seat`` cannot see now (every hand's for ``None``, a spectator): those held
    by other seats, less any it was dealt itself this round; by the ids ``seat`` knows them
    by (:func:`numbered_by`)."""
    return {
        numbered_by(match, SPECTATOR if seat is None else seat).get(card, card)
        for card in _hidden_ids(match, seat)
    }


def _hidden_ids(match: Match, seat: int | None) -> set[int]:
    dealt: set[int] = set()
    for event in _round(match):
        if isinstance(event, Dealt) and seat is not None:
            hand = event.hands[seat]
            dealt = set() if hand is None else set(hand)
    hidden: set[int] = set()
    for s, mask in enumerate(match.hands):
        if s != seat:
            hidden |= {card for card in range(128) if mask >> card & 1}
    return hidden - dealt


def check_cards(encoding: Encoding, tensor: Any, match: Match, seat: int) -> None:
    """No card piece shows a card the seat (nobody's, for a public encoding) cannot see; the
    hand is the seat's hand and ``played`` the round's plays, seat by seat."""
    shown = shown_cards(encoding, tensor)
    hidden = hidden_from(match, seat if encoding.private else None)
    for name, cards in shown.items():
        leaked = cards & hidden
        assert not leaked, f"{name} shows hidden cards {sorted(leaked)} to seat {seat}"
    names = numbered_by(match, seat if encoding.private else SPECTATOR)
    if "hand" in shown:
        hand = {k for k in range(128) if match.hands[seat] >> k & 1}
        assert shown["hand"] == {names.get(k, k) for k in hand}
    if "played" in shown:
        plays = {names.get(e.card, e.card) for e in _round(match) if isinstance(e, CardPlayed)}
        assert shown["played"] == plays
