"""What a kind of round is, as data: the record every reader of a round looks up once.

A round's :class:`RoundTraits` say what anyone at the table may know of it from the match's
public options alone: its deck, whether it is played in tricks or onto a shared
:class:`Layout`, how its trump is chosen, what its tricks and taken cards score, and, through
the :meth:`RoundTraits.inference` hook, what a seat can infer about another seat's hand from
that seat's plays and passes. Like a variant class of python-chess (``chess/variant.py``),
the record carries data attributes and delegates a few hooks to the round core that owns the
rule (:mod:`tricks`, :mod:`fantan`, :mod:`sixes`); nothing that reads it asks which kind it is.

The registry (:func:`games.round_traits`) hands them out; each family builds its rounds'
traits from that round's options, and its schedule plays the rounds from the same traits, so
the engine and every seat, bot, replay or determinizer agree on them by construction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, NamedTuple, Protocol, TypeVar, cast

from .cards import Card, card_code
from .copies import fill
from .decks import deck_mask
from .events import check_players
from .tricks import TrickInference

ALL_CARDS = 55
"""Card ids below this (the French cards and the three Jokers) may be taken in a trick."""


class Trump(Enum):
    """How a round's trump suit is chosen."""

    NONE = "none"
    """No trump: the highest card of the led suit wins."""
    FIXED = "fixed"
    """A suit the options name, public from the start (``RoundStarted.trump``)."""
    DRAWN = "drawn"
    """A uniformly random suit drawn before the deal (``TrumpDrawn``)."""
    CHOSEN = "chosen"
    """Chosen by the seats after the deal (Triathlon: two exclusions, then the dealer's call)."""


class Inference(Protocol):
    """Folds one round's public plays and says what each proves a seat does not hold."""

    def play(self, seat: int, card: Card) -> int:
        """Record ``seat``'s play of ``card``; return the cards it proves ``seat`` lacks."""
        ...

    def passed(self) -> int:
        """The cards a forced pass, now, proves its seat lacks (before the pass is recorded)."""
        ...

    def trick_won(self) -> None:
        """A trick was completed and taken."""
        ...


class Layout(ABC):
    """The rules of a round played onto a shared table, one row per suit (no tricks).

    A suit's state is its two ends on the table, ``low`` and ``high`` in the layout's own
    ranks (0, 0 while the suit is unopened). Subclasses say how a card changes them and what
    may go down next; the data attributes say what kind of layout it is.
    """

    jumps: ClassVar[bool] = False
    """Whether a card may skip a gap in its row; the cards it jumps over die (Crazy Sixes)."""
    six_and_seven: bool = False
    """Whether a six opens each suit's low stack and a seven its high one (Fan Tan's option)."""

    @abstractmethod
    def suit(self, card: Card) -> int:
        """The row ``card`` goes to, ``0..3``."""

    @abstractmethod
    def rank(self, card: Card) -> int:
        """``card``'s rank on this table (the order of its row, ace low where aces are low)."""

    @abstractmethod
    def ends(self, low: int, high: int, rank: int) -> tuple[int, int]:
        """A row's ends after a card of ``rank`` went down on it."""

    @abstractmethod
    def playable(self, suit: int, low: int, high: int) -> int:
        """The cards of row ``suit`` that may go down next, given its ends (a card mask)."""

    def inference(self) -> Inference:
        return LayoutInference(self)


class LayoutInference:
    """What plays and passes onto a :class:`Layout` show: a forced pass proves that its seat
    held nothing that could go down at that moment; a play shows nothing about the rest."""

    __slots__ = ("high", "layout", "low")

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.low = [0, 0, 0, 0]
        self.high = [0, 0, 0, 0]

    def play(self, seat: int, card: Card) -> int:
        layout = self.layout
        suit = layout.suit(card)
        self.low[suit], self.high[suit] = layout.ends(
            self.low[suit], self.high[suit], layout.rank(card)
        )
        return 0

    def passed(self) -> int:
        mask = 0
        for suit in range(4):
            mask |= self.layout.playable(suit, self.low[suit], self.high[suit])
        return mask

    def trick_won(self) -> None:
        """A layout has no tricks."""


L = TypeVar("L", bound="LayoutRound")

LAYOUT_SHARED = ("players", "playable", "table_mask", "finished", "legal_cards")
"""What every layout round's ``copy`` shares with the original (:meth:`LayoutRound._copy_as`)."""
LAYOUT_COPIED = ("hands", "low", "high")
"""And what it copies: the seats' hands and the table's rows."""


class LayoutRound:
    """What the two cores played onto a :class:`Layout` share (a Fan Tan round, a hand of
    Crazy Sixes): the seats, the hands and the table (each suit's ends, what may go down),
    laid out empty by :meth:`_lay_out`; the legal mask ``legal``, kept current by every
    change, and the same as a sorted tuple, ``legal_cards``, where the core keeps one (else
    None, and ``Match`` derives the list from ``legal``); actions taken as they are given."""

    __slots__ = (
        "finished",
        "hands",
        "high",
        "legal_cards",
        "low",
        "playable",
        "players",
        "table_mask",
    )

    legal_cards: tuple[int, ...] | None
    """The legal actions as a sorted tuple, kept by a core that has them cheaply at hand
    (Crazy Sixes); None: ``Match`` derives them from ``legal``."""
    players: int
    hands: list[int]
    low: list[int]
    high: list[int]
    """``low[s]``/``high[s]``: the ends of suit ``s`` on the table (0 while it is not opened)."""
    playable: int
    """Every card that may go down on the table as it is, whoever holds it."""
    table_mask: int
    finished: bool
    to_act: int | None
    legal: int

    def _lay_out(self, players: int, hands: Sequence[int], playable: int) -> None:
        """The round's seats and hands, and an empty table on which ``playable`` may go down."""
        self.players = check_players(players)
        self.hands = list(hands)
        self.low = [0, 0, 0, 0]
        self.high = [0, 0, 0, 0]
        self.playable = playable
        self.table_mask = 0
        self.finished = False
        self.legal_cards = None

    def __new__(cls, *args: object, **kwargs: object) -> LayoutRound:
        """An empty round for :meth:`_copy_as` to fill, also in the
        compiled build, whose own ``__new__`` would run ``__init__`` (see :mod:`.copies`)."""
        return super().__new__(cls)

    def _copy_as(self: L, shared: tuple[str, ...], copied: tuple[str, ...]) -> L:
        """A copy of this round, an empty one of its kind given its state: the seats, hands and
        table that every layout round has, and what its kind names as ``shared`` and
        ``copied`` (:func:`.copies.fill`)."""
        new = cast("L", type(self).__new__(type(self)))
        return fill(new, self, LAYOUT_SHARED + shared, LAYOUT_COPIED + copied)

    def forget_legal(self) -> None:
        """Recompute the legal mask (after hands were replaced from outside)."""
        self.legal = self._compute_legal()  # type: ignore[misc]  # a slot of each subclass

    def legal_mask(self) -> int:
        return self.legal

    def normalize(self, action: int) -> int:
        return action

    def _compute_legal(self) -> int:
        """The legal mask from the state alone."""
        raise NotImplementedError

    def _card_refused(self, card: int, why: str) -> str:
        """Why the seat to act cannot put ``card`` down: it does not hold it, else ``why``."""
        assert self.to_act is not None
        if not self.hands[self.to_act] >> card & 1:
            return f"you do not hold {card_code(card)}"
        return f"{card_code(card)} {why}"


@dataclass(frozen=True)
class TrickScoring:
    """What a trick round scores, before its multiplier: ``per_trick`` for each trick taken
    plus ``card_points[c]`` for each card ``c`` taken (the round's additive part; Triathlon's
    ``feats`` come on top, and a rule such as "all thirteen clubs score 0" is the scorer's)."""

    per_trick: int
    card_points: tuple[int, ...]
    """Points by card id, for every id below :data:`ALL_CARDS`."""
    feats: bool = False
    """Whether feats (Triathlon: a multiple of three, the last trick, the middle) also score."""

    @classmethod
    def of(
        cls, per_trick: int = 0, cards: Sequence[tuple[int, int]] = (), *, feats: bool = False
    ) -> TrickScoring:
        """From ``(card mask, points per card)`` pairs; a card in several masks adds up."""
        points = [0] * ALL_CARDS
        for mask, value in cards:
            for card in range(ALL_CARDS):
                if mask >> card & 1:
                    points[card] += value
        return cls(per_trick, tuple(points), feats)


NO_SCORING = TrickScoring.of()
"""A trick round nothing is known of: every trick and card worth nothing."""


class RoundTraits(NamedTuple):
    """One round as every seat may know it from the public options (see the module).

    Immutable; a named tuple rather than a frozen dataclass because a schedule makes one per
    round of every match, and a tuple costs a fraction of a frozen dataclass to build."""

    kind: str
    """The round's name in the log (``RoundStarted.kind``): for people, never for branching."""
    deck: tuple[Card, ...]
    layout: Layout | None = None
    """The table's rules when the round is played onto a layout; ``None``: played in tricks."""
    trump: Trump = Trump.NONE
    trump_suit: int | None = None
    """The suit when ``trump`` is :attr:`Trump.FIXED`."""
    scoring: TrickScoring | None = None
    """What the tricks and the cards taken score (a trick round); ``None`` on a layout."""
    voluntary_pass: bool = False
    """Whether a seat may pass while able to play (so a pass's being forced is hidden)."""

    @property
    def deck_mask(self) -> int:
        return deck_mask(self.deck)

    @property
    def tricks(self) -> bool:
        """Whether the round is played in tricks (else onto its layout)."""
        return self.layout is None

    def inference(self) -> Inference:
        """A fresh fold of this round's public plays, from the core that owns the rule."""
        if self.layout is not None:
            return self.layout.inference()
        return TrickInference()


UNKNOWN_ROUND = RoundTraits("", (), scoring=NO_SCORING)
"""The traits of a round whose match is not known (a seat fed no ``MatchStarted``)."""
