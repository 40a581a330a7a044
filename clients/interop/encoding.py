"""What a seat may see, as strings and flat tensors: built from the engine's views only.

Every value here comes from :func:`cardarena.engine.view` (the seat's view: its own hand and
the public table) or from the log as :class:`cardarena.engine.Projector` shows it to that seat,
the engine's only ways for hidden cards to leave it. So no tensor or string can show another
seat's hidden cards; ``tests/interop`` checks it by changing them and comparing.

The observation tensor (fixed size per game and player count; ``C`` cards, ``n`` seats, ``K``
round kinds), each piece in this order:

=================  =========  ==============================================================
piece              size       what
=================  =========  ==============================================================
viewer             n          one-hot: the seat observing
to_act             n          one-hot: the seat to act (zeros: nobody)
dealer             n          one-hot
kind               K          one-hot: the round's kind (the game's ``kinds``)
trump              5          one-hot: C D H S, or none
hand               C          the viewer's own cards
hand_sizes         n          cards held by each seat, / C
trick              n × C      the current trick's cards, in the order played
leader             n          one-hot: who led the current trick
tricks_won         n          tricks taken this round, / C
taken              n × C      the cards each seat has taken in tricks this round
excluded           4          the suits named not to be trump (Triathlon)
table              C          the cards on a shared table (Fan Tan, Crazy Sixes)
passes             n          passes this round, / C
dead               n × C      each seat's dead cards (Crazy Sixes)
placed             n          cards each seat placed this round, / C
totals             n          each seat's total so far, / the bound on a total
=================  =========  ==============================================================

The information-state tensor adds what the seat remembers of the round so far: ``played``
(n × C: the cards each seat played this round), ``order`` (C: when each card was played, as
its position in the round's plays / C) and ``dealt`` (C: the viewer's hand as dealt). Earlier
rounds are summed up by the totals; the information-state *string* is the seat's whole
projected log, so it has perfect recall.

Cards index ``C`` slots from the game's lowest card id: French games (Jokers included) use ids
0..54, the Spanish deck 64..111.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cardarena.engine import AUDITOR, GAMES, Match, MatchSetup, Projector, view
from cardarena.engine.events import CardPlayed, Dealt, Event, RoundStarted
from cardarena.engine.views import Viewer

from .bounds import bounds

Floats = npt.NDArray[np.float32]

SPANISH_BASE = 64


class Layout:
    """The pieces of one game's tensors, with their offsets."""

    def __init__(self, match_setup: MatchSetup) -> None:
        spec = GAMES[match_setup.game]
        n = self.players = match_setup.players
        first = spec.round_traits(match_setup.options, n, 0).deck
        self.base = SPANISH_BASE if min(first) >= SPANISH_BASE else 0
        c = self.cards = 48 if self.base else 55
        self.kinds = spec.kinds
        limits = bounds(match_setup)
        self.scale = float(max(abs(limits.low), abs(limits.high), 1))
        self.pieces: list[tuple[str, int]] = [
            ("viewer", n),
            ("to_act", n),
            ("dealer", n),
            ("kind", len(self.kinds)),
            ("trump", 5),
            ("hand", c),
            ("hand_sizes", n),
            ("trick", n * c),
            ("leader", n),
            ("tricks_won", n),
            ("taken", n * c),
            ("excluded", 4),
            ("table", c),
            ("passes", n),
            ("dead", n * c),
            ("placed", n),
            ("totals", n),
        ]
        self.recall: list[tuple[str, int]] = [("played", n * c), ("order", c), ("dealt", c)]
        self.observation_size = sum(size for _, size in self.pieces)
        self.information_size = self.observation_size + sum(size for _, size in self.recall)

    def shapes(self, *, recall: bool) -> dict[str, tuple[int, ...]]:
        """Each piece's shape (for OpenSpiel's observer ``dict``)."""
        n, c = self.players, self.cards
        wide = {"trick", "taken", "dead", "played"}
        pieces = self.pieces + (self.recall if recall else [])
        return {name: (n, c) if name in wide else (size,) for name, size in pieces}

    def _cards(self, out: Floats, mask: int) -> None:
        base = self.base
        while mask:
            low = mask & -mask
            out[low.bit_length() - 1 - base] = 1.0
            mask ^= low

    def observation(self, match: Match, seat: int, out: Floats) -> None:
        """Write ``seat``'s observation into ``out`` (zeroed here; ``observation_size`` long)."""
        out[:] = 0.0
        v = view(match, seat)
        n, c = self.players, self.cards
        parts = _Parts(out, self.pieces)
        parts["viewer"][seat] = 1.0
        if v.to_act is not None:
            parts["to_act"][v.to_act] = 1.0
        parts["dealer"][v.dealer] = 1.0
        if v.kind is not None and v.kind in self.kinds:
            parts["kind"][self.kinds.index(v.kind)] = 1.0
        parts["trump"][4 if v.trump is None else v.trump] = 1.0
        hand = v.hands[seat]
        self._cards(parts["hand"], 0 if hand is None else hand.mask)
        parts["hand_sizes"][:] = np.asarray(v.hand_sizes, dtype=np.float32) / c
        trick = parts["trick"].reshape(n, c)
        for position, card in enumerate(v.trick):
            trick[position, card - self.base] = 1.0
        if v.trick_leader is not None:
            parts["leader"][v.trick_leader] = 1.0
        if v.tricks_won:
            parts["tricks_won"][:] = np.asarray(v.tricks_won, dtype=np.float32) / c
        taken = parts["taken"].reshape(n, c)
        for s, cards in enumerate(v.taken):
            self._cards(taken[s], cards.mask)
        for suit in v.excluded_suits:
            parts["excluded"][suit] = 1.0
        self._cards(parts["table"], v.table.mask)
        if v.passes:
            parts["passes"][:] = np.asarray(v.passes, dtype=np.float32) / c
        dead = parts["dead"].reshape(n, c)
        for s, cards in enumerate(v.dead):
            self._cards(dead[s], cards.mask)
        if v.placed:
            parts["placed"][:] = np.asarray(v.placed, dtype=np.float32) / c
        parts["totals"][:] = np.asarray([float(t) for t in v.totals], dtype=np.float32) / (
            self.scale
        )

    def information(self, match: Match, seat: int, out: Floats) -> None:
        """Write ``seat``'s information-state tensor into ``out`` (``information_size`` long)."""
        size = self.observation_size
        self.observation(match, seat, out[:size])
        n, c = self.players, self.cards
        rest = _Parts(out[size:], self.recall)
        played = rest["played"].reshape(n, c)
        plays = 0
        for event in round_events(match, seat):
            if isinstance(event, CardPlayed):
                plays += 1
                played[event.seat, event.card - self.base] = 1.0
                rest["order"][event.card - self.base] = plays / c
            elif isinstance(event, Dealt):
                hand = event.hands[seat]
                self._cards(rest["dealt"], 0 if hand is None else hand.mask)


class _Parts:
    """Named views into one flat tensor."""

    def __init__(self, out: Floats, pieces: list[tuple[str, int]]) -> None:
        self._views: dict[str, Floats] = {}
        offset = 0
        for name, size in pieces:
            self._views[name] = out[offset : offset + size]
            offset += size

    def __getitem__(self, name: str) -> Floats:
        return self._views[name]


def round_events(match: Match, seat: int) -> list[Event]:
    """The current round's events as ``seat`` sees them (from its ``RoundStarted`` on)."""
    log = match.log
    start = len(log)
    while start > 0 and not isinstance(log[start - 1], RoundStarted):
        start -= 1
    projector = Projector(seat)
    return [projector.project(e) for e in log[max(start - 1, 0) :]]


def observation_string(match: Match, seat: int) -> str:
    """What ``seat`` sees now, in one line of ``name=value`` pieces (empty pieces left out)."""
    return _view_string(match, seat)


def auditor_string(match: Match) -> str:
    """Everything about the match now, every hand included: for people debugging, never a seat."""
    return _view_string(match, AUDITOR)


def _view_string(match: Match, viewer: Viewer) -> str:
    v = view(match, viewer)
    hands = v.hands[viewer] if isinstance(viewer, int) else " | ".join(map(str, v.hands))
    fields: dict[str, Any] = {
        "viewer": viewer,
        "round": v.round,
        "kind": v.kind,
        "dealer": v.dealer,
        "trump": "CDHS"[v.trump] if v.trump is not None else None,
        "to_act": v.to_act,
        "hand": hands,
        "hand_sizes": v.hand_sizes,
        "trick": " ".join(map(str, v.trick)) or None,
        "leader": v.trick_leader,
        "tricks_won": v.tricks_won or None,
        "taken": " | ".join(map(str, v.taken)) or None,
        "excluded": v.excluded_suits or None,
        "table": v.table or None,
        "passes": v.passes or None,
        "dead": " | ".join(map(str, v.dead)) or None,
        "placed": v.placed or None,
        "totals": tuple(map(str, v.totals)),
        "over": v.over or None,
    }
    return "; ".join(f"{k}={val}" for k, val in fields.items() if val is not None)


class InformationStrings:
    """Information-state strings, each event's text made once: OpenSpiel asks for every seat's
    string at every step, and a match's log is hundreds of events long.

    The cache is keyed by the event object, the seat (a seat's projection of a deal differs
    from another's) and whether the event's round has voluntary passes: the engine shares
    pre-built event objects between rounds, and a ``Passed`` is projected without its
    ``forced`` flag only in such a round. Each entry keeps its event alive so that the id is
    not reused; the cache is emptied when it grows past ``limit`` entries.
    """

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._texts: dict[tuple[int, int, bool], tuple[Event, str]] = {}

    def __call__(self, match: Match, seat: int) -> str:
        """Everything ``seat`` has seen, one projected log event a line: perfect recall."""
        texts = self._texts
        if len(texts) > self.limit:
            texts.clear()
        projector = Projector(seat)
        lines = []
        for event in match.log:
            if isinstance(event, RoundStarted):
                projector.project(event)  # the projector follows the rounds
            key = (id(event), seat, projector.voluntary_pass)
            known = texts.get(key)
            if known is None:
                known = texts[key] = (event, repr(projector.project(event)))
            lines.append(known[1])
        return "\n".join(lines)
