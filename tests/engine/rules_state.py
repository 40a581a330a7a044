"""What the model of the rules (``rules_model``) knows of a match, and what it says the rules
allow now: who must act and what they may do, to compare with the engine at any point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from cardarena.engine import (
    CHOOSE_TRUMP,
    EXCLUDE,
    PASS,
)

from .properties_support import TRICK_KINDS, Config
from .rules_reference import (
    JOKER_MASK,
    JOKERS,
    SEVEN_OF_HEARTS,
    SIX_OF_OROS,
    cards_in,
    fan_tan_rank,
    french,
    french_suit_mask,
    mask,
    spanish,
    spanish_rank,
)

# -- an independent model of the rules, fed with the (full) log -----------------------------


@dataclass
class RoundState:
    index: int
    kind: str
    dealer: int
    multiplier: int
    voluntary_pass: bool
    params: dict[str, Any]
    deck: tuple[int, ...]
    trump: int | None = None
    trump_pending: bool = False
    dealt: list[int] = field(default_factory=list)
    hands: list[int] = field(default_factory=list)
    table: int = 0
    trick: list[int] = field(default_factory=list)
    leader: int = 0
    trick_number: int = 0
    tricks: list[int] = field(default_factory=list)
    taken: list[int] = field(default_factory=list)
    last_trick_winner: int = -1
    auction: bool = False
    excluded: list[int] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    consecutive_passes: int = 0
    placed: list[int] = field(default_factory=list)
    dead: list[int] = field(default_factory=list)
    pending_dead: dict[int, int] = field(default_factory=dict)
    last_turn: int | None = None
    starter: int = 0
    went_out: int | None = None
    done: bool = False
    feats: tuple[tuple[str, ...], ...] | None = None

    @property
    def tricky(self) -> bool:
        return self.kind in TRICK_KINDS or self.kind == "deal"


class RulesState:
    """The state of a match as the model follows it, and the queries of RULES.md on it."""

    def __init__(self, config: Config, seed: bytes | None) -> None:
        self.config = config
        self.n = config.players
        self.seed = seed
        self.count = 0
        fd = config.options.get("first_dealer", 0)
        self.first_dealer: int | None = None if fd == "random" else int(fd)
        self.round: RoundState | None = None
        self.rounds_played = 0
        self.totals = [Fraction(0)] * self.n
        self.feats_ever: list[set[str]] = [set() for _ in range(self.n)]
        self.last_deal_feats: list[set[str]] = [set() for _ in range(self.n)]
        self.previous_starter: int | None = None
        self.over = False
        self.round_scores: list[tuple[Fraction, ...]] = []

    # -- queries ------------------------------------------------------------------------------

    def to_act(self) -> int | None:
        r = self.round
        if self.over or r is None or r.done or not r.hands:
            return None
        if r.tricky:
            if r.auction:
                return (r.dealer + 1 + len(r.excluded)) % self.n
            return (r.leader + len(r.trick)) % self.n
        return self.next_turn(r)

    def next_turn(self, r: RoundState) -> int:
        """Fan Tan and Crazy Sixes: whose turn comes next (play order; empty hands skipped)."""
        if r.last_turn is None:
            if r.kind == "fan_tan":
                return next(s for s in range(self.n) if r.hands[s] >> SEVEN_OF_HEARTS & 1)
            if r.index == 0:
                return next(s for s in range(self.n) if r.hands[s] >> SIX_OF_OROS & 1)
            return r.starter
        seat = (r.last_turn + 1) % self.n
        if r.kind == "hand":
            assert any(r.hands), "every hand is empty but the hand goes on"
            while not r.hands[seat]:
                seat = (seat + 1) % self.n
        return seat

    def playable(self, r: RoundState) -> int:
        """Fan Tan and Crazy Sixes: every card that could go down next on this table."""
        out = 0
        for suit in range(4):
            if r.kind == "fan_tan":
                ranks = sorted(fan_tan_rank(c) for c in cards_in(r.table & french_suit_mask(suit)))
                out |= self._fan_tan_suit(
                    suit, ranks, six_and_seven=r.params["openers"] == "six_and_seven"
                )
            else:
                suit_cards = mask([spanish(suit, rank) for rank in range(1, 13)])
                ranks = sorted(spanish_rank(c) for c in cards_in(r.table & suit_cards))
                if not ranks:
                    out |= 1 << spanish(suit, 6)
                else:
                    for rank in (*range(1, ranks[0]), *range(ranks[-1] + 1, 13)):
                        out |= 1 << spanish(suit, rank)
        return out & mask(r.deck)

    @staticmethod
    def _fan_tan_suit(suit: int, ranks: list[int], *, six_and_seven: bool) -> int:
        def card(rank: int) -> int:
            return french(suit, 14 if rank == 1 else rank)

        out = 0
        if six_and_seven:
            low = [x for x in ranks if x <= 6]
            high = [x for x in ranks if x >= 7]
            assert not low or low == list(range(low[0], 7)), f"broken low stack {low}"
            assert not high or high == list(range(7, high[-1] + 1)), f"broken high stack {high}"
            if not low:
                out |= 1 << card(6)
            elif low[0] > 1:
                out |= 1 << card(low[0] - 1)
            if not high:
                out |= 1 << card(7)
            elif high[-1] < 13:
                out |= 1 << card(high[-1] + 1)
            return out
        if not ranks:
            return 1 << card(7)
        assert 7 in ranks and ranks == list(range(ranks[0], ranks[-1] + 1)), f"broken row {ranks}"
        if ranks[0] > 1:
            out |= 1 << card(ranks[0] - 1)
        if ranks[-1] < 13:
            out |= 1 << card(ranks[-1] + 1)
        return out

    def legal(self, seat: int) -> list[int]:
        """What RULES.md lets ``seat`` do now (it must be the seat to act)."""
        r = self.round
        assert r is not None and seat == self.to_act()
        hand = r.hands[seat]
        if r.tricky:
            if r.auction:
                base = EXCLUDE if len(r.excluded) < 2 else CHOOSE_TRUMP
                return [base + s for s in range(4) if s not in r.excluded]
            if r.trick and r.trick[0] not in JOKERS:
                follow = hand & french_suit_mask(r.trick[0] // 13)
                if follow:
                    return cards_in(follow)
            jokers = hand & JOKER_MASK
            if jokers:  # interchangeable: one action, the lowest Joker held
                hand ^= jokers ^ (jokers & -jokers)
            return cards_in(hand)
        if r.kind == "fan_tan":
            if r.last_turn is None:
                return [SEVEN_OF_HEARTS]
            cards = cards_in(hand & self.playable(r))
            if not cards:
                return [PASS]
            if r.voluntary_pass and r.consecutive_passes < self.n:
                return [*cards, PASS]
            return cards
        if r.index == 0 and r.last_turn is None:
            return [SIX_OF_OROS]
        return cards_in(hand & self.playable(r)) or [PASS]
