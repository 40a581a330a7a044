"""What a seat may see, as strings and flat tensors: built from the engine's views only.

Every value here comes from :func:`cardarena.engine.view` (the seat's view: its own hand and
the public table) or from the log as :class:`cardarena.engine.Projector` shows it to that seat
(the round's memory reads the plays, which every projection shows as they are, and of a deal
only the seat's own hand, which is what its projection keeps), the engine's only ways for
hidden cards to leave it. So no tensor or string can show another seat's hidden cards;
``tests/interop`` checks it by changing them and comparing, and by checking every card a
tensor shows against what the seat can see, over random play.

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

The **public** tensors (OpenSpiel's ``private_info=NONE``) are what a spectator sees
(``view(match, SPECTATOR)``, the log as ``Projector(SPECTATOR)`` shows it): the same pieces
without ``viewer``, ``hand`` and ``dealt``, so every seat's public tensor is the same.

Cards index ``C`` slots from the game's lowest card id: French games (Jokers included) use ids
0..54, the Spanish deck 64..111.

Every tensor is written whole into a new array (nothing of an earlier one can survive in it).
An OpenSpiel state keeps its tensors (:class:`Tensors`) until its match changes, since OpenSpiel
asks for them through several observers at once; the PettingZoo environment makes each
observation anew (a turn observes once). The round's memory (:class:`RoundMemory`) is followed
along the log, never rebuilt from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import Any

import numpy as np
import numpy.typing as npt

from cardarena.engine import AUDITOR, GAMES, SPECTATOR, Match, MatchSetup, Projector, view
from cardarena.engine.cards import JOKERS, cards_of
from cardarena.engine.events import CardPlayed, Dealt, Event, RoundStarted, TrickWon
from cardarena.engine.views import Viewer, can_see, view_names

from .bounds import bounds

Floats = npt.NDArray[np.float32]

SPANISH_BASE = 64
PRIVATE = frozenset({"viewer", "hand", "dealt"})
"""The pieces only the seat itself may see (left out of the public tensors)."""
WIDE = frozenset({"trick", "taken", "dead", "played"})
"""The pieces with a row of cards per seat or position."""
_MASK_BYTES = 16
"""Card masks are read as 128 bits: every card id is below 112."""
ROWS_KEPT = 4096
"""How many card masks an encoding keeps as rows before it starts again."""
FEW_CARDS = 30
"""Up to this many cards, a mask not kept is written card by card rather than made a row."""
FEW_CHANGES = 4
"""A row differing by up to this many cards from the last one made there is made from it."""


class Layout:
    """The pieces of one game's tensors, with their offsets."""

    def __init__(self, match_setup: MatchSetup) -> None:
        spec = GAMES[match_setup.game]
        n = self.players = match_setup.players
        first = spec.round_traits(match_setup.options, n, 0).deck
        self.base = SPANISH_BASE if min(first) >= SPANISH_BASE else 0
        c = self.cards = 48 if self.base else 55
        self.kinds = spec.kinds
        self.kind_index = {kind: k for k, kind in enumerate(self.kinds)}
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
        self.encodings = {
            (recall, private): Encoding(self, recall=recall, private=private)
            for recall in (False, True)
            for private in (True, False)
        }
        self.observation_size = self.encodings[False, True].size
        self.information_size = self.encodings[True, True].size

    def encoding(self, *, recall: bool, private: bool = True) -> Encoding:
        """The tensor with (``recall``) or without the round's memory, for one seat
        (``private``) or for anyone (the public tensor)."""
        return self.encodings[recall, private]

    def shapes(self, *, recall: bool, private: bool = True) -> dict[str, tuple[int, ...]]:
        """Each piece's shape (for OpenSpiel's observer ``dict``)."""
        return self.encoding(recall=recall, private=private).shapes

    def observation(self, match: Match, seat: int, out: Floats) -> None:
        """Write ``seat``'s observation into ``out`` (all of it; ``observation_size`` long)."""
        out[:] = self.encodings[False, True].encode(match, seat, RoundMemory())

    def information(self, match: Match, seat: int, out: Floats) -> None:
        """Write ``seat``'s information-state tensor into ``out`` (all of it;
        ``information_size`` long)."""
        out[:] = self.encodings[True, True].encode(match, seat, RoundMemory())


class Encoding:
    """One kind of tensor (with or without the round's memory, a seat's or the public one):
    its pieces, their offsets, and how to write it from the engine's view."""

    def __init__(self, layout: Layout, *, recall: bool, private: bool) -> None:
        self.layout = layout
        self.recall = recall
        self.private = private
        n, c = layout.players, layout.cards
        pieces = layout.pieces + (layout.recall if recall else [])
        self.pieces = [(name, size) for name, size in pieces if private or name not in PRIVATE]
        self.shapes: dict[str, tuple[int, ...]] = {
            name: (n, c) if name in WIDE else (size,) for name, size in self.pieces
        }
        self.offset: dict[str, int] = {}
        offset = 0
        for name, size in self.pieces:
            self.offset[name] = offset
            offset += size
        self.size = offset
        self._rows: dict[int, Floats] = {}
        self._kept_totals: tuple[Any, list[float]] = ((), [])
        self.last_rows: dict[int, tuple[int, Floats]] = {}
        """The last row made for each place of the tensor, with its mask."""
        self.joker_rows = [
            self.offset[name] + row * c
            for name in ("hand", "trick", "taken", "played", "order", "dealt")
            if name in self.offset and not layout.base
            for row in range(n if name in WIDE else 1)
        ]
        """Where each row of cards starts that may show a Joker (Triathlon's deck)."""

    def changed(self, row: Floats, mask: int, new: int) -> Floats:
        """``row`` (of ``mask``) made the row of ``new`` (kept as :meth:`cards` keeps it)."""
        out = row.copy()
        base = self.layout.base
        for card in cards_of(new & ~mask):
            out[card - base] = 1.0
        for card in cards_of(mask & ~new):
            out[card - base] = 0.0
        out.flags.writeable = False
        if len(self._rows) >= ROWS_KEPT:
            self._rows.clear()
        self._rows[new] = out
        return out

    def cards(self, mask: int) -> Floats:
        """A card mask as a row of ``C`` zeros and ones (kept: a hand or the cards a seat has
        taken stay the same for many turns; read-only)."""
        row = self._rows.get(mask)
        if row is None:
            if len(self._rows) >= ROWS_KEPT:
                self._rows.clear()
            layout = self.layout
            raw = np.frombuffer(mask.to_bytes(_MASK_BYTES, "little"), np.uint8)
            bits = np.unpackbits(raw, bitorder="little")[layout.base : layout.base + layout.cards]
            row = self._rows[mask] = bits.astype(np.float32)
            row.flags.writeable = False
        return row

    def encode(self, match: Match, seat: int, memory: RoundMemory) -> Floats:
        """A new array: ``seat``'s tensor (the public one if this encoding is not private).

        It reads what :func:`~cardarena.engine.view` reads, the same way (the public table
        from the round's ``table()``, the hand sizes, and a hand only where the engine's
        :func:`~cardarena.engine.views.can_see` lets the viewer see it), without building the
        whole view, which costs more than the rest of the tensor; ``tests/interop`` holds the
        two to each other and checks every card shown against what the seat may see.
        """
        layout = self.layout
        c = layout.cards
        at = self.offset
        out = np.zeros(self.size, np.float32)
        if self.private:
            out[at["viewer"] + seat] = 1.0
        to_act = match.to_act
        if to_act is not None:
            out[at["to_act"] + to_act] = 1.0
        out[at["dealer"] + match.dealer] = 1.0
        plan = match.plan
        if plan is not None:
            kind = layout.kind_index.get(plan.traits.kind)
            if kind is not None:
                out[at["kind"] + kind] = 1.0
        trump = match.trump
        out[at["trump"] + (4 if trump < 0 else trump)] = 1.0
        start = at["totals"]
        for k, total in enumerate(self._totals(match.totals)):
            if total:
                out[start + k] = total
        rnd = match.round
        if rnd is not None:
            rows = self._rows
            hands = rnd.hands
            if self.private and can_see(seat, seat):
                _row(self, out, at["hand"], hands[seat], rows)
            start = at["hand_sizes"]
            for k, hand in enumerate(hands):
                if hand:
                    out[start + k] = hand.bit_count() / c
            table = rnd.table()
            trick = table.get("trick")
            if trick:
                start = at["trick"] - layout.base
                for position, card in enumerate(trick):
                    out[start + position * c + card] = 1.0
            leader = table.get("trick_leader")
            if leader is not None:
                out[at["leader"] + leader] = 1.0
            _counts(out, at["tricks_won"], table.get("tricks_won", ()), c)
            start = at["taken"]
            for k, cards in enumerate(table.get("taken", ())):
                if cards.mask:
                    _row(self, out, start + k * c, cards.mask, rows)
            for suit in table.get("excluded_suits", ()):
                out[at["excluded"] + suit] = 1.0
            cards = table.get("table")
            if cards is not None:
                _row(self, out, at["table"], cards.mask, rows)
            _counts(out, at["passes"], table.get("passes", ()), c)
            start = at["dead"]
            for k, cards in enumerate(table.get("dead", ())):
                if cards.mask:
                    _row(self, out, start + k * c, cards.mask, rows)
            _counts(out, at["placed"], table.get("placed", ()), c)
        if self.recall:
            memory.follow(match, layout)
            start = at["played"]  # ``played`` and ``order``, side by side
            out[start : start + len(memory.block)] = memory.block
            if self.private:
                out[at["dealt"] : at["dealt"] + c] = memory.dealt[seat]
        if self.joker_rows:
            names = view_names(match, seat if self.private else SPECTATOR)
            if names:
                _rename_jokers(out, self.joker_rows, names)
        return out

    def _totals(self, totals: tuple[Any, ...]) -> list[float]:
        """The totals as the tensor shows them (/ the bound), worked out once per tuple: they
        change only when a round is scored, and Crazy Sixes' are fractions, slow to divide."""
        kept, values = self._kept_totals
        if totals is not kept:
            scale = self.layout.scale
            values = [float(t) / scale for t in totals]
            self._kept_totals = (totals, values)
        return values


def _row(encoding: Encoding, out: Floats, start: int, mask: int, rows: dict[int, Floats]) -> None:
    """Write a card mask as a row of ``C`` at ``start`` (``out`` is zero there): a row kept
    from before; else the last row made for this place, if it differs by a few cards (a table
    grows a card a turn); else card by card for a hand's few cards (a hand changes whenever
    its seat plays, so it is seldom seen twice); else a row made and kept."""
    if not mask:
        return
    c = encoding.layout.cards
    row = rows.get(mask)
    if row is None:
        last = encoding.last_rows.get(start)
        if last is not None and (last[0] ^ mask).bit_count() <= FEW_CHANGES:
            row = encoding.changed(last[1], last[0], mask)
        elif mask.bit_count() <= FEW_CARDS:
            start -= encoding.layout.base
            for card in cards_of(mask):
                out[start + card] = 1.0
            return
        else:
            row = encoding.cards(mask)
        encoding.last_rows[start] = (mask, row)
    out[start : start + c] = row


def _rename_jokers(out: Floats, rows: list[int], names: Mapping[int, int]) -> None:
    """Move each Joker's column to the one its reader numbers it by, in every row of cards
    (``cardarena.engine.jokers``: the engine's own numbers would tell who holds which)."""
    first = JOKERS[0]
    for start in rows:
        at = start + first
        values = out[at : at + 3].copy()
        if not values.any():
            continue
        out[at : at + 3] = 0.0
        for k, value in enumerate(values):
            if value:
                out[start + names.get(first + k, first + k)] = value


def _counts(out: Floats, offset: int, values: Any, scale: float) -> None:
    for k, value in enumerate(values):  # a few seats: item by item beats numpy's slicing
        if value:
            out[offset + k] = value / scale


class RoundMemory:
    """What every seat may remember of the round in play, followed along a match's log, as the
    tensors show it: the cards each seat played and when (``block``: the ``played`` rows, then
    ``order``; public) and each seat's hand as dealt (``dealt``, a row a seat), of which a
    seat's tensor shows only its own row (as ``Projector(seat)`` shows the deal to it).

    It reads only the log's new events each time; another match (a copy, a resampled world),
    a shorter log or another layout makes it start again from the round's beginning.
    """

    __slots__ = ("block", "dealt", "layout", "match", "plays", "seen")

    def __init__(self) -> None:
        self.layout: Layout | None = None
        self.match: Match | None = None
        self.seen = 0
        self.plays = 0
        self.block: Floats = np.zeros(0, np.float32)
        self.dealt: Floats = np.zeros((0, 0), np.float32)

    def _forget(self, layout: Layout) -> None:
        n, c = layout.players, layout.cards
        self.plays = 0
        self.block = np.zeros((n + 1) * c, np.float32)
        self.dealt = np.zeros((n, c), np.float32)

    def follow(self, match: Match, layout: Layout) -> None:
        log = match.log
        if match is not self.match or len(log) < self.seen or layout is not self.layout:
            self.match = match
            self.layout = layout
            start = len(log)
            while start > 0 and not isinstance(log[start - 1], RoundStarted):
                start -= 1
            self.seen = start
            self._forget(layout)
        c, base = layout.cards, layout.base
        for event in islice(log, self.seen, None):
            if isinstance(event, CardPlayed):
                self.plays += 1
                self.block[event.seat * c + event.card - base] = 1.0
                self.block[layout.players * c + event.card - base] = self.plays / c
            elif isinstance(event, RoundStarted):
                self._forget(layout)
            elif isinstance(event, Dealt):
                masks = [0 if hand is None else hand.mask for hand in event.hands]
                raw = b"".join([mask.to_bytes(_MASK_BYTES, "little") for mask in masks])
                bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")
                self.dealt[:] = bits.reshape(len(masks), 8 * _MASK_BYTES)[:, base : base + c]
        self.seen = len(log)


class Tensors:
    """One match's tensors and strings, each made once per position and seat.

    A position is the match object and the length of its log (every action and every deal
    adds events to it, and nothing else changes what a seat sees). What is kept is returned
    as it is, read-only: callers copy it. It is only a cache: a copy of the state gets a new,
    empty one (the copy is another match object anyway), and it pickles empty.
    """

    __slots__ = ("_length", "_made", "_match", "memory")

    def __init__(self) -> None:
        self.memory = RoundMemory()
        self._match: Match | None = None
        self._length = -1
        self._made: dict[tuple[Any, ...], Any] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensors:
        return Tensors()

    def __reduce__(self) -> tuple[type[Tensors], tuple[()]]:
        return Tensors, ()

    def _kept(self, match: Match) -> dict[tuple[Any, ...], Any]:
        if match is not self._match or len(match.log) != self._length:
            self._match = match
            self._length = len(match.log)
            self._made = {}
        return self._made

    def tensor(self, match: Match, seat: int, encoding: Encoding) -> Floats:
        """``seat``'s tensor in ``encoding`` (read-only; a public encoding ignores the seat)."""
        made = self._kept(match)
        key = (encoding, seat if encoding.private else -1)
        out: Floats | None = made.get(key)
        if out is None:
            out = encoding.encode(match, seat, self.memory)
            out.flags.writeable = False
            made[key] = out
        return out

    def string(
        self, match: Match, viewer: Viewer, *, recall: bool, strings: InformationStrings
    ) -> str:
        """``viewer``'s information-state string (``recall``: its projected log, through the
        game's ``strings``) or observation string."""
        made = self._kept(match)
        key = ("string", recall, viewer)
        text: str | None = made.get(key)
        if text is None:
            text = made[key] = strings(match, viewer) if recall else _view_string(match, viewer)
        return text


def observation_string(match: Match, seat: int) -> str:
    """What ``seat`` sees now, in one line of ``name=value`` pieces (empty pieces left out)."""
    return _view_string(match, seat)


def auditor_string(match: Match) -> str:
    """Everything about the match now, every hand included: for people debugging, never a seat."""
    return _view_string(match, AUDITOR)


def _view_string(match: Match, viewer: Viewer) -> str:
    v = view(match, viewer)
    hands: Any = None  # a spectator sees no hand
    if isinstance(viewer, int):
        hands = v.hands[viewer]
    elif viewer == AUDITOR:
        hands = " | ".join(map(str, v.hands))
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
        self._texts: dict[tuple[int, Viewer, bool], tuple[Event, str]] = {}

    def __call__(self, match: Match, seat: Viewer) -> str:
        """Everything ``seat`` (or a spectator) has seen, one projected log event a line:
        perfect recall."""
        texts = self._texts
        if len(texts) > self.limit:
            texts.clear()
        projector = Projector(seat)
        lines = []
        for event in match.log:
            if _shows_joker(event):  # named by what the seat has seen so far: not kept
                lines.append(repr(projector.project(event)))
                continue
            if isinstance(event, RoundStarted | Dealt):
                projector.project(event)  # the projector follows the rounds and the deal
            key = (id(event), seat, projector.voluntary_pass)
            known = texts.get(key)
            if known is None:
                known = texts[key] = (event, repr(projector.project(event)))
            lines.append(known[1])
        return "\n".join(lines)


def _shows_joker(event: Event) -> bool:
    """A Joker played, or a trick holding one: each reader names it its own way."""
    if isinstance(event, CardPlayed):
        return event.card in JOKERS
    return isinstance(event, TrickWon) and any(card in JOKERS for card in event.cards)
