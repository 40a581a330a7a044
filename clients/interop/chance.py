"""A match whose chance is played from outside: OpenSpiel's chance nodes.

OpenSpiel wants chance as explicit nodes, each with its outcomes and their probabilities
summing to 1. The engine's chance is a 32-byte seed read through the fair-deal stream
(RULES.md §4); its outcomes, the seeds, cannot be listed (2^256 of them), and a sample of
them would be a different game, so the seed is not the chance node. Instead, each random
event is its own node:

* a random first dealer: one node, ``uniform(n)`` over the seats;
* a random trump: one node, ``uniform(4)`` over the suits ``C D H S``;
* a deal: one node per card, in dealing order, each uniform over the cards not yet dealt:
  card ``k`` goes to seat ``(dealer + 1 + k) mod n``, as after a shuffle (RULES.md §4). Drawing
  each next card uniformly from the rest *is* a uniform shuffle, so the hands have exactly the
  distribution of the fair-deal stream's; and no node has more than 55 outcomes (112 ids).

The deal is handed to the engine whole, when its last card is drawn
(:meth:`~cardarena.engine.Match.resolve`), which checks it as it checks a log's deal. Nobody
acts until then, so no seat ever sees a part of a deal.

With a ``seed`` (32 bytes) the nodes stay, each with the one outcome of probability 1 that the
fair-deal stream gives: the match is then exactly the one a cardarena server deals from that
seed, card for card (a logged match can be reproduced and studied).
"""

from __future__ import annotations

from operator import index
from typing import Any

from cardarena.engine import CardSet, Match, MatchSetup, RandomStream
from cardarena.engine.cards import cards_of
from cardarena.engine.copies import fork
from cardarena.engine.decks import deck_mask, hand_sizes
from cardarena.engine.events import (
    DealerDrawn,
    Dealt,
    Event,
    MatchStarted,
    RoundStarted,
    TrumpDrawn,
)
from cardarena.engine.fairdeal import DEALER_LABEL, check_seed, deal_label, trump_label
from cardarena.engine.match import ActionReader

DEALER = "dealer"
TRUMP = "trump"
DEAL = "deal"


class ChanceMatch:
    """An engine match plus the deal in progress; chance outcomes in, engine events out."""

    __slots__ = ("_left", "_order", "dealt", "history", "match", "seed", "setup")

    def __init__(self, match_setup: MatchSetup, *, seed: bytes | None = None) -> None:
        started = MatchStarted(match_setup.game, match_setup.players, match_setup.options, "")
        self.setup = match_setup
        self.match = Match.from_start(started)
        self.seed = None if seed is None else check_seed(seed)
        self.dealt: list[int] = []
        """The cards of the pending deal drawn so far, in dealing order."""
        self.history: list[int] = []
        """Every chance outcome and action taken, in order: what a pickled copy replays."""
        self._order: list[int] | None = None
        self._left = -1
        """The cards of the pending deal not drawn yet, as a mask (-1: not worked out yet)."""

    def __getstate__(self) -> tuple[MatchSetup, bytes | None, list[int]]:
        """Pickled as its setup and history (OpenSpiel serialises a state by pickling its
        attributes; the engine's game specs hold cached functions that do not pickle)."""
        return self.setup, self.seed, self.history

    def __setstate__(self, state: tuple[MatchSetup, bytes | None, list[int]]) -> None:
        match_setup, seed, history = state
        ChanceMatch.__init__(self, match_setup, seed=seed)
        for step in history:
            self.step(step)

    def step(self, value: int) -> None:
        """Take ``value``: the pending chance node's outcome, or the seat to act's action."""
        match = self.match
        to_act = match.to_act
        if to_act is not None:
            match.apply(to_act, value)
            self.history.append(value)
        elif match.over:
            raise ValueError("the match is over")
        else:
            self.apply(value)

    def __deepcopy__(self, memo: dict[int, Any]) -> ChanceMatch:
        """OpenSpiel copies a state by deep-copying its attributes at every step of a search. A
        deep copy of a match costs ~25 ms (nearly all of it the trick core's lookup tables,
        which no move changes); the engine's :func:`~cardarena.engine.copies.fork`
        copies what play changes and shares the rest, in ~0.1 ms."""
        other = ChanceMatch.__new__(ChanceMatch)
        other.setup = self.setup
        other.history = list(self.history)
        other.match = fork(self.match)
        other.seed = self.seed
        other.dealt = list(self.dealt)
        other._order = None if self._order is None else list(self._order)
        other._left = self._left
        return other

    @property
    def is_chance(self) -> bool:
        return not self.match.over and self.match.pending is not None

    def outcomes(self) -> list[tuple[int, float]]:
        """The pending chance node's outcomes with their probabilities (they sum to 1)."""
        match = self.match
        pending = match.pending
        if match.over or pending is None:
            return []
        if self.seed is not None:
            return [(self._seeded(), 1.0)]
        if pending == DEALER:
            choices = list(range(match.players))
        elif pending == TRUMP:
            choices = [0, 1, 2, 3]
        else:
            choices = cards_of(self._undealt())
        p = 1.0 / len(choices)
        return [(c, p) for c in choices]

    def _undealt(self) -> int:
        """The cards of the pending deal not drawn yet (a mask)."""
        if self._left < 0:
            assert self.match.plan is not None
            self._left = deck_mask(self.match.plan.deck)
            for card in self.dealt:
                self._left &= ~(1 << card)
        return self._left

    def _seeded(self) -> int:
        """The outcome the fair-deal stream gives the pending node (the engine's own draws)."""
        assert self.seed is not None
        match = self.match
        if match.pending == DEALER:
            return RandomStream(self.seed, DEALER_LABEL).uniform(match.players)
        if match.pending == TRUMP:
            return RandomStream(self.seed, trump_label(match.round_index)).uniform(4)
        if self._order is None:
            assert match.plan is not None
            stream = RandomStream(self.seed, deal_label(match.round_index))
            self._order = stream.shuffle(match.plan.deck)
        return self._order[len(self.dealt)]

    def apply(self, outcome: int) -> None:
        """Take ``outcome`` at the pending node; raises ``ValueError`` if it is not one of its."""
        match = self.match
        if match.over or match.pending is None:
            raise ValueError("no chance node is pending")
        try:
            value = -1 if isinstance(outcome, bool) else index(outcome)
        except TypeError:
            value = -1
        pending = match.pending
        if self.seed is not None:
            known = value == self._seeded()
        elif pending == DEAL:
            left = self._undealt()
            known = value >= 0 and bool(left >> value & 1)
            if known:
                self._left = left ^ 1 << value
        else:
            known = 0 <= value < (match.players if pending == DEALER else 4)
        if not known:
            raise ValueError(f"{outcome!r} is not an outcome of this chance node")
        outcome = value
        self.history.append(outcome)
        if match.pending == DEALER:
            match.resolve(DealerDrawn(outcome))
        elif match.pending == TRUMP:
            match.resolve(TrumpDrawn(match.round_index, outcome))
        else:
            self.dealt.append(outcome)
            assert match.plan is not None
            if len(self.dealt) == len(match.plan.deck):
                self._deal()

    def _deal(self) -> None:
        match = self.match
        players = match.players
        hands = [0] * players
        for k, card in enumerate(self.dealt):
            hands[(match.dealer + 1 + k) % players] |= 1 << card
        sizes = hand_sizes(len(self.dealt), match.dealer, players)
        self.dealt = []
        self._order = None
        self._left = -1
        match.resolve(Dealt(match.round_index, tuple(map(CardSet, hands)), sizes))

    def deal_target(self) -> int:
        """The seat the next card of the pending deal goes to (for the chance action's name)."""
        match = self.match
        return (match.dealer + 1 + len(self.dealt)) % match.players


def steps_of(log: list[Event]) -> list[int]:
    """The chance outcomes and actions, in order, that make a :class:`ChanceMatch` play a full
    log's match (a determinized one, say): each draw's outcome, each deal's cards in dealing
    order (card ``k`` to seat ``dealer + 1 + k``) and each recorded action."""
    steps: list[int] = []
    reader = ActionReader()
    dealer = 0
    for event in log:
        if isinstance(event, RoundStarted):
            dealer = event.dealer
        if isinstance(event, DealerDrawn):
            steps.append(event.seat)
        elif isinstance(event, TrumpDrawn):
            steps.append(event.suit)
        elif isinstance(event, Dealt):
            hands = [sorted(hand) if hand is not None else [] for hand in event.hands]
            players = len(hands)
            for k in range(sum(map(len, hands))):
                steps.append(hands[(dealer + 1 + k) % players].pop(0))
        recorded = reader(event)
        if recorded is not None:
            steps.append(recorded[1])
    return steps
