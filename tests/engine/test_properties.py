"""Property-based tests: random play of every game, every player count and the interesting options.

Each example draws a 32-byte match seed and a seed for the random player, plays the match to
its end with random legal actions, and checks properties that every match must have:

* cards are conserved at every step (hands, table, trick, tricks taken, dead piles);
* the legal actions are sorted, never empty for the seat to act, never a lone (forced) pass
  except where passes may be voluntary (a seat that cannot play is asked there), equal to
  what RULES.md allows, and anything else is refused without touching the match;
* the whole log follows the rules, checked by a small independent model of RULES.md: the
  deals and draws of §4, turn order, follow suit, trick winners, forced passes, dead cards,
  every round's scores (§1.3, §1.4, §2.3, §3.4) and the end of the match;
* the round-total invariants of §1.3, the hand totals of §2.3 and the feats of §3.4;
* every match ends, and its winners are the seats with the best total;
* same seed and same actions give the same log; ``replay`` reproduces a match, with and
  without the seed, and from any prefix.
"""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.engine import (
    CHOOSE_TRUMP,
    EXCLUDE,
    PASS,
    ActionError,
    IllegalAction,
    MalformedAction,
    Match,
    NotYourTurn,
    ReplayError,
    new_match,
    replay,
)
from cardarena.engine.events import (
    CardPlayed,
    CardsDead,
    DealerDrawn,
    Dealt,
    Event,
    FeatsEarned,
    MatchEnded,
    MatchStarted,
    Passed,
    RoundScored,
    RoundStarted,
    SuitExcluded,
    TrickWon,
    TrumpChosen,
    TrumpDrawn,
)
from cardarena.engine.fantan import FanTanRound
from cardarena.engine.sixes import SixesHand
from cardarena.engine.tricks import TrickRound

MAX_STEPS = 10_000
"""Generous bound on the seat actions of one match (the longest, Triathlon to 50 deals, ~2 100)."""

# -- cards, decks and the fair-deal stream, written from RULES.md (not from the engine) --------

JOKERS = (52, 53, 54)
JOKER_MASK = (1 << 52) | (1 << 53) | (1 << 54)
SPANISH_BASE = 64
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
MULTIPLES_OF_THREE = frozenset({3, 6, 9, 12})
FEATS = ("last", "middle", "multiple")


def french(suit: int, rank: int) -> int:
    """French card id: ``suit * 13 + rank - 2`` with ranks 2..14 (ace 14)."""
    return suit * 13 + rank - 2


def spanish(suit_index: int, rank: int) -> int:
    """Spanish card id: suit index 0..3 (O C E B), ranks 1..12."""
    return SPANISH_BASE + suit_index * 12 + rank - 1


def mask(cards: Sequence[int]) -> int:
    out = 0
    for card in cards:
        out |= 1 << card
    return out


def cards_in(m: int) -> list[int]:
    return [c for c in range(m.bit_length()) if m >> c & 1]


def fan_tan_rank(card: int) -> int:
    """Ace low: A=1 … K=13 (RULES.md §1.1)."""
    index = card % 13
    return 1 if index == 12 else index + 2


def spanish_suit(card: int) -> int:
    return (card - SPANISH_BASE) // 12


def spanish_rank(card: int) -> int:
    return (card - SPANISH_BASE) % 12 + 1


SEVEN_OF_HEARTS = french(HEARTS, 7)
QUEEN_OF_CLUBS = french(CLUBS, 12)
QUEENS = mask([french(s, 12) for s in range(4)])
CLUBS_MASK = mask([french(CLUBS, r) for r in range(2, 15)])
SIX_OF_OROS = spanish(0, 6)
SPANISH_ACES_AND_KINGS = mask([spanish(s, r) for s in range(4) for r in (1, 12)])


def french_suit_mask(suit: int) -> int:
    return mask([french(suit, r) for r in range(2, 15)])


class Stream:
    """RULES.md §4: blocks ``SHA-256(seed || label || 0x00 || i)``, 32-bit rejection sampling."""

    def __init__(self, seed: bytes, label: str) -> None:
        self.prefix = seed + label.encode("ascii") + b"\x00"
        self.block = 0
        self.buffer = b""

    def uniform(self, k: int) -> int:
        limit = 2**32 - 2**32 % k
        while True:
            while len(self.buffer) < 4:
                self.buffer += hashlib.sha256(self.prefix + self.block.to_bytes(8, "big")).digest()
                self.block += 1
            x = int.from_bytes(self.buffer[:4], "big")
            self.buffer = self.buffer[4:]
            if x < limit:
                return x % k

    def shuffle(self, deck: Sequence[int]) -> list[int]:
        out = list(deck)
        for i in range(len(out) - 1, 0, -1):
            j = self.uniform(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def reference_deal(seed: bytes, index: int, deck: Sequence[int], dealer: int, n: int) -> list[int]:
    order = Stream(seed, f"deal/{index}").shuffle(deck)
    hands = [0] * n
    for k, card in enumerate(order):
        hands[(dealer + 1 + k) % n] |= 1 << card
    return hands


# -- the configurations under test ------------------------------------------------------------

NORWEGIAN = ("pentathlon", "hexathlon", "heptathlon")
TRICK_KINDS = ("pass", "clubs", "queens", "grand", "trumps", "finale")
TRICKS_PER_PLAYER = {3: 17, 4: 13, 5: 10}
PRESET_ROUNDS: dict[str, tuple[str, ...]] = {
    "pentathlon": ("pass", "clubs", "queens", "fan_tan", "grand"),
    "hexathlon": ("pass", "clubs", "queens", "fan_tan", "grand", "trumps"),
    "heptathlon": ("pass", "clubs", "fan_tan", "queens", "grand", "trumps", "finale"),
}
PRESET_OPENERS = {"pentathlon": "seven", "hexathlon": "six_and_seven", "heptathlon": "seven"}
PRESET_TRUMP: dict[str, dict[str, str]] = {
    "pentathlon": {"mode": "random"},
    "hexathlon": {"mode": "random"},
    "heptathlon": {"mode": "fixed", "suit": "S"},
}


@dataclass(frozen=True)
class Config:
    game: str
    players: int
    options: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    """A short label for the test id (the options otherwise)."""

    def new(self, seed: bytes) -> Match:
        return new_match(
            self.game, seed=seed, players=self.players, options=copy.deepcopy(dict(self.options))
        )

    @property
    def norwegian(self) -> bool:
        return self.game in NORWEGIAN

    @property
    def lowest_wins(self) -> bool:
        return self.norwegian

    def rounds(self) -> list[dict[str, Any]]:
        """Each Norwegian round's full parameters (RULES.md §1.5, §1.6), from the raw options."""
        entries = self.options.get("rounds", PRESET_ROUNDS[self.game])
        out = []
        for entry in entries:
            item = {"type": entry} if isinstance(entry, str) else dict(entry)
            kind = item["type"]
            defaults: dict[str, Any] = {
                "multiplier": 1,
                "all_taken_zero": False,
                "points_per_queen": 4,
                "queen_of_clubs": 8,
                "trump": PRESET_TRUMP[self.game],
                "openers": PRESET_OPENERS[self.game],
                "voluntary_pass": False,
                "winner_scores_zero": True,
            }
            out.append({**defaults, **self.options.get(kind, {}), **item})
        return out

    def deck(self, kind: str) -> tuple[int, ...]:
        """The canonical (pre-shuffle) deck of a round of ``kind`` (RULES.md §1.1, §2.1, §3.1, §4)."""
        if self.game == "crazy_sixes":
            if self.options.get("deck", 48) == 48:
                ranks: Sequence[int] = range(1, 13)
            else:
                ranks = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
            return tuple(spanish(s, r) for s in range(4) for r in ranks)
        if self.game == "triathlon":
            return (*(french(s, r) for s in range(4) for r in range(6, 15)), *JOKERS)
        if kind == "fan_tan":
            return tuple(range(52))
        removed = {3: {french(DIAMONDS, 2)}, 4: set(), 5: {french(DIAMONDS, 2), french(HEARTS, 2)}}
        return tuple(c for c in range(52) if c not in removed[self.players])


def _id(config: Config) -> str:
    label = config.name or ",".join(f"{k}={v}" for k, v in sorted(config.options.items()))
    return f"{config.game}-{config.players}p" + (f"[{label}]" if label else "")


CUSTOM_PENTATHLON_ROUNDS: list[Any] = [
    "fan_tan",
    {"type": "trumps", "multiplier": 2},
    "trumps",
    {"type": "fan_tan", "openers": "six_and_seven", "voluntary_pass": True},
    "finale",
    "pass",
    "pass",
    {"type": "queens", "multiplier": 3},
    "clubs",
    "grand",
]
CUSTOM_HEXATHLON_ROUNDS: list[Any] = [
    "trumps",
    {"type": "trumps", "trump": {"mode": "fixed", "suit": "H"}},
    "fan_tan",
    {"type": "fan_tan", "openers": "seven", "winner_scores_zero": False},
    "clubs",
    "clubs",
]

NORWEGIAN_CONFIGS = [
    *(Config(game, n) for game in NORWEGIAN for n in (3, 4, 5)),
    Config(
        "pentathlon",
        4,
        {"fan_tan": {"voluntary_pass": True}, "first_dealer": "random"},
        name="voluntary_pass,first_dealer=random",
    ),
    Config(
        "hexathlon",
        3,
        {"fan_tan": {"voluntary_pass": True, "winner_scores_zero": False}, "first_dealer": 2},
        name="voluntary_pass,winner_counts_passes,first_dealer=2",
    ),
    Config(
        "heptathlon",
        5,
        {
            "fan_tan": {"openers": "six_and_seven", "voluntary_pass": True},
            "trumps": {"trump": {"mode": "random"}},
        },
        name="six_and_seven,voluntary_pass,random_trump",
    ),
    Config(
        "pentathlon",
        3,
        {"rounds": CUSTOM_PENTATHLON_ROUNDS, "first_dealer": "random"},
        name="custom_rounds,first_dealer=random",
    ),
    Config(
        "hexathlon",
        5,
        {"rounds": CUSTOM_HEXATHLON_ROUNDS, "trumps": {"multiplier": 2}},
        name="custom_rounds,trumps_x2",
    ),
    Config(
        "heptathlon",
        4,
        {
            "clubs": {"all_taken_zero": True},
            "queens": {"points_per_queen": 5},
            "finale": {"queen_of_clubs": 4, "multiplier": 2},
            "fan_tan": {"multiplier": 3, "voluntary_pass": True},
            "first_dealer": 3,
        },
        name="house_options,first_dealer=3",
    ),
]
SIXES_CONFIGS = [
    Config("crazy_sixes", 3),
    Config("crazy_sixes", 4),
    Config("crazy_sixes", 3, {"deck": 40}),
    Config("crazy_sixes", 4, {"deck": 40, "first_dealer": "random"}),
    Config("crazy_sixes", 4, {"split": "floor"}),
    Config("crazy_sixes", 3, {"pool": "rivals_only", "first_dealer": 1}),
    Config("crazy_sixes", 4, {"deck": 40, "split": "floor", "pool": "rivals_only"}),
    Config("crazy_sixes", 3, {"target_score": 1}),
    Config("crazy_sixes", 4, {"target_score": 30, "first_dealer": 3}),
]
TRIATHLON_CONFIGS = [
    Config("triathlon", 3),
    Config("triathlon", 3, {"zero_is_multiple": True}),
    Config("triathlon", 3, {"end": "triathlon_in_one_deal"}),
    Config(
        "triathlon", 3, {"end": "triathlon_in_one_deal", "max_deals": 3, "first_dealer": "random"}
    ),
    Config("triathlon", 3, {"max_deals": 1, "zero_is_multiple": True}),
    Config("triathlon", 3, {"first_dealer": 2, "end": "all_feats_cumulative"}),
]
ALL_CONFIGS = [*NORWEGIAN_CONFIGS, *SIXES_CONFIGS, *TRIATHLON_CONFIGS]


def params(configs: Sequence[Config]) -> list[Any]:
    return [pytest.param(c, id=_id(c)) for c in configs]


SEEDS = st.binary(min_size=32, max_size=32)
RNG_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FEW = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- random play ------------------------------------------------------------------------------


def choose(rng: random.Random, legal: Sequence[int]) -> int:
    """A random legal action; a voluntary pass half the time, so that pass streaks happen."""
    if PASS in legal and len(legal) > 1 and rng.random() < 0.5:
        return PASS
    return rng.choice(list(legal))


def play_random(match: Match, rng: random.Random) -> list[tuple[int, int]]:
    """Play to the end; return the (seat, action) pairs applied."""
    actions: list[tuple[int, int]] = []
    for _ in range(MAX_STEPS):
        if match.over:
            return actions
        seat = match.to_act
        assert seat is not None, "a match that is not over must have a seat to act"
        action = choose(rng, match.legal_actions())
        match.apply(seat, action)
        actions.append((seat, action))
    raise AssertionError(f"the match did not end within {MAX_STEPS} actions")


def rounds_of(log: Sequence[Event]) -> list[list[Event]]:
    """The log cut into rounds: from each RoundStarted to its RoundScored, inclusive."""
    out: list[list[Event]] = []
    current: list[Event] | None = None
    for event in log:
        if isinstance(event, RoundStarted):
            assert current is None, "a round started before the previous one was scored"
            current = [event]
        elif current is not None:
            current.append(event)
            if isinstance(event, RoundScored):
                out.append(current)
                current = None
    assert current is None, "the log ends inside a round"
    return out


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


class RulesModel:
    """Follows a match's full log event by event and asserts that each event obeys RULES.md.

    ``seed`` (when known) lets it recompute every deal and draw (§4). It can also say who must
    act next and what they may do, to compare with the engine at any point.
    """

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

    # -- the log ------------------------------------------------------------------------------

    def feed_all(self, log: Sequence[Event]) -> None:
        for event in log[self.count :]:
            self.feed(event)

    def feed(self, event: Event) -> None:
        where = f"event {self.count} ({event!r})"
        self.count += 1
        assert not self.over, f"{where}: after MatchEnded"
        r = self.round
        if r is not None and r.pending_dead and not isinstance(event, CardsDead):
            raise AssertionError(f"{where}: expected CardsDead for {r.pending_dead}")
        if self.count == 1:
            assert isinstance(event, MatchStarted), f"{where}: a log starts with MatchStarted"
            assert (event.game, event.players) == (self.config.game, self.n)
            if self.seed is not None:
                expected = hashlib.sha256(b"cardarena-seed-v1" + self.seed).hexdigest()
                assert event.commitment == expected, f"{where}: wrong seed commitment"
            return
        handler: Any = {
            MatchStarted: self._match_started,
            DealerDrawn: self._dealer_drawn,
            RoundStarted: self._round_started,
            TrumpDrawn: self._trump_drawn,
            Dealt: self._dealt,
            SuitExcluded: self._suit_excluded,
            TrumpChosen: self._trump_chosen,
            CardPlayed: self._card_played,
            CardsDead: self._cards_dead,
            Passed: self._passed,
            TrickWon: self._trick_won,
            FeatsEarned: self._feats_earned,
            RoundScored: self._round_scored,
            MatchEnded: self._match_ended,
        }[type(event)]
        handler(event, where)

    def _match_started(self, event: MatchStarted, where: str) -> None:
        raise AssertionError(f"{where}: a second MatchStarted")

    def _dealer_drawn(self, event: DealerDrawn, where: str) -> None:
        assert self.first_dealer is None and self.round is None, f"{where}: unexpected dealer draw"
        assert 0 <= event.seat < self.n
        if self.seed is not None:
            assert event.seat == Stream(self.seed, "dealer").uniform(self.n), (
                f"{where}: not §4's draw"
            )
        self.first_dealer = event.seat

    def _round_started(self, event: RoundStarted, where: str) -> None:
        assert self.first_dealer is not None, f"{where}: the first dealer was never drawn"
        assert self.round is None, f"{where}: the previous round was not scored"
        index = self.rounds_played
        assert not self._match_should_end(), f"{where}: the match should have ended"
        assert event.round == index, f"{where}: expected round {index}"
        assert event.dealer == (self.first_dealer + index) % self.n, f"{where}: wrong dealer"
        params: dict[str, Any] = {}
        trump: int | None = None
        draw = False
        if self.config.norwegian:
            params = self.config.rounds()[index]
            kind = params["type"]
            if kind == "trumps":
                if params["trump"]["mode"] == "fixed":
                    trump = "CDHS".index(params["trump"]["suit"])
                else:
                    draw = True
            multiplier = params["multiplier"]
            voluntary = kind == "fan_tan" and params["voluntary_pass"]
        else:
            kind = "hand" if self.config.game == "crazy_sixes" else "deal"
            multiplier, voluntary = 1, False
        assert (event.kind, event.multiplier, event.voluntary_pass, event.trump) == (
            kind,
            multiplier,
            voluntary,
            trump,
        ), f"{where}: expected {kind} x{multiplier} voluntary_pass={voluntary} trump={trump}"
        self.round = RoundState(
            index,
            kind,
            event.dealer,
            multiplier,
            voluntary,
            params,
            self.config.deck(kind),
            trump=trump,
            trump_pending=draw,
        )

    def _trump_drawn(self, event: TrumpDrawn, where: str) -> None:
        r = self.round
        assert r is not None and r.trump_pending and not r.hands, f"{where}: unexpected trump draw"
        assert event.round == r.index and 0 <= event.suit < 4
        if self.seed is not None:
            expected = Stream(self.seed, f"trump/{r.index}").uniform(4)
            assert event.suit == expected, f"{where}: §4 draws suit {expected}"
        r.trump = event.suit
        r.trump_pending = False

    def _dealt(self, event: Dealt, where: str) -> None:
        r = self.round
        assert r is not None and not r.hands and not r.trump_pending, f"{where}: unexpected deal"
        assert event.round == r.index
        hands = [h.mask if h is not None else -1 for h in event.hands]
        assert len(hands) == self.n and min(hands) >= 0, f"{where}: a full log shows every hand"
        union = 0
        for h in hands:
            assert not union & h, f"{where}: a card was dealt twice"
            union |= h
        assert union == mask(r.deck), f"{where}: the hands are not the round's deck"
        base, extra = divmod(len(r.deck), self.n)
        sizes = tuple(
            base + (1 if (s - r.dealer - 1) % self.n < extra else 0) for s in range(self.n)
        )
        assert tuple(h.bit_count() for h in hands) == sizes == event.hand_sizes, f"{where}: sizes"
        if self.seed is not None:
            expected = reference_deal(self.seed, r.index, r.deck, r.dealer, self.n)
            assert hands == expected, f"{where}: not the deal §4 gives"
        r.dealt = list(hands)
        r.hands = list(hands)
        zeros = [0] * self.n
        r.tricks, r.taken, r.passes, r.placed, r.dead = (list(zeros) for _ in range(5))
        r.leader = (r.dealer + 1) % self.n
        r.auction = r.kind == "deal"
        if r.kind == "hand":
            r.starter = (
                next(s for s in range(self.n) if hands[s] >> SIX_OF_OROS & 1)
                if self.previous_starter is None
                else (self.previous_starter + 1) % self.n
            )

    def _suit_excluded(self, event: SuitExcluded, where: str) -> None:
        r = self.round
        assert r is not None and r.auction and len(r.excluded) < 2, f"{where}: not now"
        assert event.seat == self.to_act(), f"{where}: seat D+{len(r.excluded) + 1} excludes"
        assert 0 <= event.suit < 4 and event.suit not in r.excluded, f"{where}: bad suit"
        r.excluded.append(event.suit)

    def _trump_chosen(self, event: TrumpChosen, where: str) -> None:
        r = self.round
        assert r is not None and r.auction and len(r.excluded) == 2, f"{where}: not now"
        assert event.seat == r.dealer, f"{where}: the dealer chooses the trump"
        assert 0 <= event.suit < 4 and event.suit not in r.excluded, f"{where}: bad suit"
        r.trump = event.suit
        r.auction = False

    def _card_played(self, event: CardPlayed, where: str) -> None:
        r = self.round
        assert r is not None and r.hands and not r.done, f"{where}: no round in play"
        assert event.seat == self.to_act(), f"{where}: seat {self.to_act()} is to act"
        assert r.hands[event.seat] >> event.card & 1, f"{where}: the seat does not hold the card"
        assert event.card in self.legal(event.seat), f"{where}: not legal per RULES.md"
        r.hands[event.seat] ^= 1 << event.card
        if r.tricky:
            r.trick.append(event.card)
            return
        r.last_turn = event.seat
        r.consecutive_passes = 0
        r.table |= 1 << event.card
        r.placed[event.seat] += 1
        if r.kind == "fan_tan":
            if not r.hands[event.seat]:
                r.went_out = event.seat
                r.done = True
            return
        suit = spanish_suit(event.card)
        ranks = [spanish_rank(c) for c in cards_in(r.table) if spanish_suit(c) == suit]
        zone = mask([spanish(suit, x) for x in range(min(ranks) + 1, max(ranks))]) & ~r.table
        r.pending_dead = {s: r.hands[s] & zone for s in range(self.n) if r.hands[s] & zone}
        if r.table & SPANISH_ACES_AND_KINGS == SPANISH_ACES_AND_KINGS:
            r.done = True

    def _cards_dead(self, event: CardsDead, where: str) -> None:
        r = self.round
        assert r is not None and r.kind == "hand", f"{where}: dead cards outside Crazy Sixes"
        assert r.pending_dead.get(event.seat) == event.cards.mask, (
            f"{where}: the cards strictly between a suit's ends are {r.pending_dead}"
        )
        del r.pending_dead[event.seat]
        r.hands[event.seat] ^= event.cards.mask
        r.dead[event.seat] |= event.cards.mask

    def _passed(self, event: Passed, where: str) -> None:
        r = self.round
        assert r is not None and r.kind in ("fan_tan", "hand") and not r.done, f"{where}: no pass"
        assert event.seat == self.to_act(), f"{where}: seat {self.to_act()} is to act"
        legal = self.legal(event.seat)
        if event.forced:
            assert legal == [PASS], f"{where}: a forced pass by a seat that could play {legal}"
        else:
            assert event.forced is False, f"{where}: a full log says whether a pass was forced"
            assert PASS in legal and len(legal) > 1, f"{where}: a voluntary pass is not allowed"
        r.last_turn = event.seat
        r.passes[event.seat] += 1
        r.consecutive_passes += 1

    def _trick_won(self, event: TrickWon, where: str) -> None:
        r = self.round
        assert r is not None and r.tricky and len(r.trick) == self.n, f"{where}: trick not complete"
        assert (event.trick, event.leader, event.cards) == (
            r.trick_number,
            r.leader,
            tuple(r.trick),
        )
        winner = (r.leader + trick_winner(r.trick, r.trump)) % self.n
        assert event.seat == winner, f"{where}: seat {winner} wins this trick"
        r.taken[winner] |= mask(r.trick)
        r.tricks[winner] += 1
        r.trick = []
        r.trick_number += 1
        r.leader = r.last_trick_winner = winner
        if r.trick_number == r.dealt[0].bit_count():
            r.done = True

    def _feats_earned(self, event: FeatsEarned, where: str) -> None:
        r = self.round
        assert r is not None and r.kind == "deal" and r.done and r.feats is None, f"{where}"
        expected = triathlon_feats(
            r.tricks, r.last_trick_winner, zero=bool(self.config.options.get("zero_is_multiple"))
        )
        assert event.round == r.index and event.feats == expected, f"{where}: expected {expected}"
        r.feats = expected

    def _round_scored(self, event: RoundScored, where: str) -> None:
        r = self.round
        assert r is not None and r.done and not r.trick, f"{where}: the round is not over"
        assert event.round == r.index
        expected = self._round_scores(r)
        assert event.scores == expected, f"{where}: RULES.md scores {expected}"
        self.totals = [t + s for t, s in zip(self.totals, expected, strict=True)]
        assert event.totals == tuple(self.totals), f"{where}: totals"
        self.round_scores.append(expected)
        if r.kind == "hand":
            assert not any(r.hands), f"{where}: every card is placed or dead at the end of a hand"
            self.previous_starter = r.starter
        if r.kind == "deal":
            assert r.feats is not None, f"{where}: no FeatsEarned before the score"
            self.last_deal_feats = [set(f) for f in r.feats]
            for seat, f in enumerate(r.feats):
                self.feats_ever[seat] |= set(f)
        self.rounds_played += 1
        self.round = None

    def _match_ended(self, event: MatchEnded, where: str) -> None:
        assert self.round is None and self.rounds_played > 0, f"{where}: a round is unfinished"
        assert self._match_should_end(), f"{where}: the match should go on"
        assert event.totals == tuple(self.totals), f"{where}: totals"
        best = min(self.totals) if self.config.lowest_wins else max(self.totals)
        assert event.winners == tuple(s for s, t in enumerate(self.totals) if t == best)
        self.over = True

    # -- rules of scoring and ending ----------------------------------------------------------

    def _match_should_end(self) -> bool:
        played = self.rounds_played
        options = self.config.options
        if self.config.norwegian:
            return played == len(self.config.rounds())
        if self.config.game == "crazy_sixes":
            return played > 0 and max(self.totals) >= options.get("target_score", 100)
        if played == 0:
            return False
        if played >= options.get("max_deals", 50):
            return True
        if options.get("end", "all_feats_cumulative") == "all_feats_cumulative":
            return any(len(f) == 3 for f in self.feats_ever)
        return any(len(f) == 3 for f in self.last_deal_feats)

    def _round_scores(self, r: RoundState) -> tuple[Fraction, ...]:
        n, p = self.n, r.params
        raw: list[Fraction]
        if r.kind == "pass":
            raw = [Fraction(t) for t in r.tricks]
        elif r.kind in ("grand", "trumps"):
            raw = [Fraction(-t) for t in r.tricks]
        elif r.kind == "clubs":
            counts = [(t & CLUBS_MASK).bit_count() for t in r.taken]
            raw = [Fraction(0 if c == 13 and p["all_taken_zero"] else c) for c in counts]
        elif r.kind == "queens":
            raw = [Fraction((t & QUEENS).bit_count() * p["points_per_queen"]) for t in r.taken]
        elif r.kind == "finale":
            raw = [
                Fraction(
                    (p["queen_of_clubs"] if t >> QUEEN_OF_CLUBS & 1 else 0)
                    + 4 * (t & QUEENS & ~(1 << QUEEN_OF_CLUBS)).bit_count()
                    + (t & CLUBS_MASK & ~(1 << QUEEN_OF_CLUBS)).bit_count()
                )
                for t in r.taken
            ]
        elif r.kind == "fan_tan":
            assert r.went_out is not None
            raw = [
                Fraction(
                    (0 if p["winner_scores_zero"] else r.passes[s])
                    if s == r.went_out
                    else r.passes[s] + r.hands[s].bit_count()
                )
                for s in range(n)
            ]
        elif r.kind == "hand":
            options = self.config.options
            raw = list(
                sixes_scores(
                    r.placed,
                    [d.bit_count() for d in r.dead],
                    split=options.get("split", "exact"),
                    pool=options.get("pool", "all_unplaced"),
                )
            )
        else:
            assert r.feats is not None
            raw = list(triathlon_scores(r.tricks, r.feats))
        return tuple(x * r.multiplier for x in raw)


def trick_winner(trick: Sequence[int], trump: int | None) -> int:
    """Index of the winning card (RULES.md §1.2.3, §3.3): a led Joker wins; else the highest
    trump; else the highest card of the led suit. Ids grow with rank within a suit."""
    if trick[0] in JOKERS:
        return 0
    trumps = [i for i, c in enumerate(trick) if c < 52 and trump is not None and c // 13 == trump]
    if trumps:
        return max(trumps, key=lambda i: trick[i])
    led = trick[0] // 13
    return max(
        (i for i, c in enumerate(trick) if c < 52 and c // 13 == led), key=lambda i: trick[i]
    )


def sixes_scores(
    placed: Sequence[int], dead: Sequence[int], *, split: str, pool: str
) -> tuple[Fraction, ...]:
    """RULES.md §2.3 and §2.4."""
    best = max(placed)
    winners = [s for s, x in enumerate(placed) if x == best]
    unplaced = (
        sum(dead)
        if pool == "all_unplaced"
        else sum(d for s, d in enumerate(dead) if s not in winners)
    )
    share = (
        Fraction(unplaced, len(winners)) if split == "exact" else Fraction(unplaced // len(winners))
    )
    return tuple(
        Fraction(x) + ((share + (5 if dead[s] == 0 else 0)) if s in winners else 0)
        for s, x in enumerate(placed)
    )


def triathlon_feats(tricks: Sequence[int], last: int, *, zero: bool) -> tuple[tuple[str, ...], ...]:
    """RULES.md §3.4: F1 multiple of three, F2 last trick, F3 middle (or odd one out)."""
    multiples = MULTIPLES_OF_THREE | ({0} if zero else set())
    if len(set(tricks)) == 3:
        middle = sorted(range(3), key=lambda s: tricks[s])[1]
    else:
        middle = next(s for s in range(3) if list(tricks).count(tricks[s]) == 1)
    out = []
    for seat, t in enumerate(tricks):
        f = {"multiple"} if t in multiples else set()
        if seat == last:
            f.add("last")
        if seat == middle:
            f.add("middle")
        out.append(tuple(sorted(f)))
    return tuple(out)


def triathlon_scores(tricks: Sequence[int], feats: Sequence[Sequence[str]]) -> tuple[Fraction, ...]:
    bonus = 10 if any("multiple" in f for f in feats) else 20
    return tuple(
        Fraction(
            t
            + 10 * ("multiple" in f)
            + 10 * ("last" in f)
            + bonus * ("middle" in f)
            + 100 * (len(f) == 3)
        )
        for t, f in zip(tricks, feats, strict=True)
    )


# -- step checks ------------------------------------------------------------------------------


def check_conservation(match: Match, deck: int, deck_size: int) -> None:
    """Hands + everything on the table partition the round's deck (RULES.md §1.1, §2.1, §3.1)."""
    rnd = match.round
    assert rnd is not None
    parts: list[int] = list(rnd.hands)
    if isinstance(rnd, TrickRound):
        parts += [mask(rnd.trick), *rnd.taken]
    elif isinstance(rnd, FanTanRound):
        parts.append(rnd.table_mask)
    elif isinstance(rnd, SixesHand):
        parts += [rnd.table_mask, *rnd.dead]
    else:  # pragma: no cover - a new round core needs its own partition here
        raise AssertionError(f"unknown round core {type(rnd).__name__}")
    union = 0
    for part in parts:
        union |= part
    assert union == deck, "a card of the deck is missing, or a foreign card appeared"
    assert sum(p.bit_count() for p in parts) == deck_size, "a card is in two places at once"


def expected_error(config: Config, deck: int, action: int) -> type[ActionError]:
    """Which refusal an action not in legal_actions deserves."""
    is_card = 0 <= action <= 54 or SPANISH_BASE <= action <= SPANISH_BASE + 47
    is_action = is_card or action == PASS or EXCLUDE <= action <= CHOOSE_TRUMP + 3
    if not is_action or (is_card and not deck >> action & 1):
        return MalformedAction
    return IllegalAction


PROBES = (*range(-2, 134), 200, 1000, 10**6)


def probe_refusals(
    match: Match, config: Config, deck: int, rng: random.Random, count: int | None
) -> None:
    """Actions outside legal_actions (``count`` of them at random, or all of them) and wrong
    seats are refused with the right ActionError subclass; the match is unchanged."""
    seat = match.to_act
    assert seat is not None
    legal = match.legal_actions()
    assert match.round is not None
    before = (len(match.log), match.log[-3:], seat, legal, list(match.round.hands))
    excluded = set(legal)
    if any(a in JOKERS for a in legal):
        excluded |= set(JOKERS)  # "a Joker" is one action: any Joker id stands for it
    candidates = [a for a in PROBES if a not in excluded]
    probes: list[tuple[int, int, type[ActionError]]] = [
        (seat, a, expected_error(config, deck, a))
        for a in (candidates if count is None else rng.sample(candidates, count))
    ]
    probes.append(
        ((seat + rng.randrange(1, config.players)) % config.players, legal[0], NotYourTurn)
    )
    probes.append((rng.choice([-1, config.players]), legal[0], MalformedAction))
    for who, action, error in probes:
        with pytest.raises(ActionError) as info:
            match.apply(who, action)
        assert type(info.value) is error, (
            f"seat {who} action {action}: {info.value!r}, expected {error}"
        )
        assert str(info.value), "a refusal explains itself"
        after = (
            len(match.log),
            match.log[-3:],
            match.to_act,
            match.legal_actions(),
            list(match.round.hands),
        )
        assert after == before, "a refused action changed the match"


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("config", params(ALL_CONFIGS))
@SOME
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_cards_conserved_and_state_matches_the_rules(
    config: Config, seed: bytes, rng_seed: int
) -> None:
    """(a) Card conservation at every step, plus the engine's state against the rules model:
    the seat to act, the hands, and the legal actions (exactly RULES.md's, sorted)."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    model = RulesModel(config, seed)
    for _ in range(MAX_STEPS):
        model.feed_all(match.log)
        assert model.round is not None or model.over
        if model.round is not None:
            deck = model.round.deck
            check_conservation(match, mask(deck), len(deck))
            assert match.round is not None and list(match.round.hands) == model.round.hands
        assert match.to_act == model.to_act()
        if match.over:
            break
        seat = match.to_act
        assert seat is not None
        legal = match.legal_actions()
        assert legal == sorted(model.legal(seat)), "legal actions differ from RULES.md's"
        match.apply(seat, choose(rng, legal))
    else:
        raise AssertionError("the match did not end")
    assert model.over and model.count == len(match.log)


@pytest.mark.parametrize("config", params(ALL_CONFIGS))
@FEW
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_legal_actions_and_refusals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(h) legal_actions() is sorted, duplicate-free, non-empty, never a lone pass (a forced pass
    is applied automatically) except where passes may be voluntary (then a seat that cannot
    play is asked); an action outside it raises the right ActionError subclass and changes
    nothing; apply returns exactly the new log events, starting with the action."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    model = RulesModel(config, seed)
    steps = 0
    while not match.over:
        steps += 1
        assert steps <= MAX_STEPS
        model.feed_all(match.log)
        assert model.round is not None
        seat = match.to_act
        assert seat is not None
        legal = match.legal_actions()
        assert legal, "the seat to act always has a legal action"
        assert legal == sorted(set(legal)), "legal actions are sorted and distinct"
        voluntary = model.round.voluntary_pass
        if not voluntary:
            assert legal != [PASS], "a lone pass is forced: it must be applied automatically"
        if steps % 3 == 1:
            # Every action outside legal_actions now and then, a few at random otherwise.
            count = None if steps % 60 == 1 else 3
            probe_refusals(match, config, mask(model.round.deck), rng, count=count)
        action = choose(rng, legal)
        alias = next((j for j in JOKERS if action in JOKERS and j != action), None)
        alias_events = None
        if alias is not None and rng.random() < 0.3:
            alias_events = match.clone().apply(seat, alias)
        before = len(match.log)
        events = match.apply(seat, action)
        assert match.log[before:] == events, "apply returns exactly the events it appended"
        if alias_events is not None:
            # Any Joker id means "a Joker" (RULES.md §3.3): the same events as the legal one.
            assert alias_events == events
        first = events[0]
        if action == PASS:
            # Only a round with voluntary passes asks a seat that cannot play (RULES.md).
            assert first == Passed(seat, legal == [PASS])
        elif action >= CHOOSE_TRUMP:
            assert first == TrumpChosen(seat, action - CHOOSE_TRUMP)
        elif action >= EXCLUDE:
            assert first == SuitExcluded(seat, action - EXCLUDE)
        else:
            assert first == CardPlayed(seat, action)
        in_round = True
        for later in events[1:]:
            # Nothing is ever played or chosen for a seat; only forced passes are automatic,
            # and none where passes may be voluntary (its grouping would show it was forced).
            assert not isinstance(later, CardPlayed | SuitExcluded | TrumpChosen), later
            assert not (isinstance(later, Passed) and not later.forced), later
            assert not (in_round and voluntary and isinstance(later, Passed)), later
            in_round = in_round and not isinstance(later, RoundScored)
    assert match.to_act is None and match.legal_actions() == []
    length = len(match.log)
    last_deal = [e for e in match.log if isinstance(e, Dealt)][-1]
    a_card = min(c for hand in last_deal.hands if hand is not None for c in hand)
    for seat in range(config.players):
        for action in (a_card, PASS):
            with pytest.raises(NotYourTurn):
                match.apply(seat, action)
    assert len(match.log) == length


@pytest.mark.parametrize("config", params(NORWEGIAN_CONFIGS))
@SOME
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_norwegian_round_totals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(b) RULES.md §1.3 invariants from the RoundScored events: pass sums to h, clubs 13,
    queens 16, grand -h, trumps -h (each times the round's multiplier); h = 17/13/10. Fan Tan:
    passes plus cards left, the player who went out scoring 0 (§1.4)."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    h = TRICKS_PER_PLAYER[config.players]
    plans = config.rounds()
    segments = rounds_of(match.log)
    assert [seg[0].kind for seg in segments if isinstance(seg[0], RoundStarted)] == [
        p["type"] for p in plans
    ]
    for plan, seg in zip(plans, segments, strict=True):
        started, scored = seg[0], seg[-1]
        assert isinstance(started, RoundStarted) and isinstance(scored, RoundScored)
        kind, mult, total = plan["type"], plan["multiplier"], sum(scored.scores)
        tricks = [e for e in seg if isinstance(e, TrickWon)]
        if kind == "fan_tan":
            assert not tricks
            dealt = next(e for e in seg if isinstance(e, Dealt))
            plays = [e for e in seg if isinstance(e, CardPlayed)]
            passes = [e.seat for e in seg if isinstance(e, Passed)]
            out = plays[-1].seat
            left = [len(h) if h else 0 for h in dealt.hands]
            for p in plays:
                left[p.seat] -= 1
            assert left[out] == 0 and all(left[s] > 0 for s in range(config.players) if s != out)
            own = 0 if plan["winner_scores_zero"] else passes.count(out)
            expected = [
                own if s == out else passes.count(s) + left[s] for s in range(config.players)
            ]
            assert list(scored.scores) == [x * mult for x in expected]
            continue
        assert len(tricks) == h and all(len(t.cards) == config.players for t in tricks)
        won = [sum(t.seat == s for t in tricks) for s in range(config.players)]
        if kind == "pass":
            assert total == h * mult and list(scored.scores) == [w * mult for w in won]
        elif kind == "clubs":
            clubs = [0] * config.players
            for t in tricks:
                clubs[t.seat] += sum(c // 13 == CLUBS for c in t.cards)
            if plan["all_taken_zero"] and 13 in clubs:
                assert list(scored.scores) == [0] * config.players
            else:
                assert total == 13 * mult and list(scored.scores) == [c * mult for c in clubs]
        elif kind == "queens":
            assert total == 4 * plan["points_per_queen"] * mult
            if plan["points_per_queen"] == 4:
                assert total == 16 * mult
        elif kind in ("grand", "trumps"):
            assert total == -h * mult and list(scored.scores) == [-w * mult for w in won]
        else:
            assert kind == "finale"
            assert total == (plan["queen_of_clubs"] + 24) * mult
            if plan["queen_of_clubs"] == 8:
                assert total == 32 * mult


@pytest.mark.parametrize("config", params(SIXES_CONFIGS))
@SOME
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_crazy_sixes_hand_totals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(c) RULES.md §2.3: every card ends placed or dead; with split exact and pool
    all_unplaced a hand's scores sum to the deck size + 5 per winner without dead cards;
    with the other options the winners' share is the (floored, rivals') pool."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    size = 48 if config.options.get("deck", 48) == 48 else 40
    exact = config.options.get("split", "exact") == "exact"
    everything = config.options.get("pool", "all_unplaced") == "all_unplaced"
    for seg in rounds_of(match.log):
        scored = seg[-1]
        assert isinstance(scored, RoundScored)
        placed = [0] * config.players
        dead = [0] * config.players
        for e in seg:
            if isinstance(e, CardPlayed):
                placed[e.seat] += 1
            elif isinstance(e, CardsDead):
                dead[e.seat] += len(e.cards)
        assert sum(placed) + sum(dead) == size, "every card is placed or dead at the end"
        best = max(placed)
        winners = [s for s in range(config.players) if placed[s] == best]
        clean = sum(1 for s in winners if dead[s] == 0)
        total = sum(scored.scores)
        if exact and everything:
            assert total == size + 5 * clean
        pool = sum(dead) if everything else sum(d for s, d in enumerate(dead) if s not in winners)
        share = Fraction(pool, len(winners)) if exact else Fraction(pool // len(winners))
        for s in range(config.players):
            bonus = share + 5 * (dead[s] == 0) if s in winners else 0
            assert scored.scores[s] == placed[s] + bonus
        assert all(isinstance(x, Fraction) for x in scored.scores)
    totals = [e.totals for e in match.log if isinstance(e, RoundScored)]
    target = config.options.get("target_score", 100)
    assert all(max(t) < target for t in totals[:-1]) and max(totals[-1]) >= target


@pytest.mark.parametrize("config", params(TRIATHLON_CONFIGS))
@SOME
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_triathlon_feats(config: Config, seed: bytes, rng_seed: int) -> None:
    """(d) RULES.md §3.4: per deal the trick counts sum to 13, exactly one seat earns
    "middle", exactly one "last" (the winner of trick 13), "multiple" goes with 3/6/9/12."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    zero = bool(config.options.get("zero_is_multiple"))
    multiples = MULTIPLES_OF_THREE | ({0} if zero else set())
    for seg in rounds_of(match.log):
        tricks = [e for e in seg if isinstance(e, TrickWon)]
        feats = [e for e in seg if isinstance(e, FeatsEarned)]
        assert len(tricks) == 13 and len(feats) == 1
        counts = [sum(t.seat == s for t in tricks) for s in range(3)]
        assert sum(counts) == 13
        earned = feats[0].feats
        assert all(set(f) <= set(FEATS) for f in earned)
        assert sum("middle" in f for f in earned) == 1
        assert [s for s in range(3) if "last" in earned[s]] == [tricks[-1].seat]
        assert [("multiple" in f) for f in earned] == [c in multiples for c in counts]
        middle = next(s for s in range(3) if "middle" in earned[s])
        others = sorted(counts[s] for s in range(3) if s != middle)
        if len(set(counts)) == 3:
            assert others[0] < counts[middle] < others[1]
        else:
            assert others[0] == others[1] != counts[middle]


@pytest.mark.parametrize("config", params(ALL_CONFIGS))
@FEW
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_match_ends_with_best_totals(config: Config, seed: bytes, rng_seed: int) -> None:
    """(e) Every match ends (within MAX_STEPS actions) with one MatchEnded, last in the log,
    whose totals are the sums of the round scores and whose winners are exactly the seats with
    the best total: lowest for the Norwegian family, highest otherwise."""
    match = config.new(seed)
    play_random(match, random.Random(rng_seed))
    assert match.over
    ended = match.log[-1]
    assert isinstance(ended, MatchEnded)
    assert sum(isinstance(e, MatchEnded) for e in match.log) == 1
    scored = [e.scores for e in match.log if isinstance(e, RoundScored)]
    totals = tuple(sum((s[i] for s in scored), Fraction(0)) for i in range(config.players))
    assert ended.totals == match.totals == totals
    best = min(totals) if config.lowest_wins else max(totals)
    assert (
        ended.winners
        == match.winners
        == tuple(s for s in range(config.players) if totals[s] == best)
    )
    assert ended.winners, "somebody wins"


@pytest.mark.parametrize("config", params(ALL_CONFIGS))
@FEW
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_same_seed_same_actions_same_log(config: Config, seed: bytes, rng_seed: int) -> None:
    """(f) Determinism: the same seed and the same action sequence give identical logs (and
    the same random player sees the same legal actions); another seed deals differently."""
    first = config.new(seed)
    actions = play_random(first, random.Random(rng_seed))
    again = config.new(bytes(bytearray(seed)))
    for seat, action in actions:
        again.apply(seat, action)
    assert again.log == first.log
    third = config.new(seed)
    assert play_random(third, random.Random(rng_seed)) == actions
    assert third.log == first.log
    other = config.new(hashlib.sha256(seed).digest())
    deals = [e for e in first.log if isinstance(e, Dealt)][:1]
    assert deals != [e for e in other.log if isinstance(e, Dealt)][:1]


@pytest.mark.parametrize("config", params(ALL_CONFIGS))
@FEW
@given(seed=SEEDS, rng_seed=RNG_SEEDS, data=st.data())
def test_replay_reproduces_the_match(
    config: Config, seed: bytes, rng_seed: int, data: st.DataObject
) -> None:
    """(g) replay(log) and replay(log, seed=seed) rebuild the match (log, totals, winners); a
    prefix ending after any action replays to the same seat to act and legal actions, and the
    replayed match carries on to the same log; a wrong seed or a forged score is refused."""
    rng = random.Random(rng_seed)
    match = config.new(seed)
    marks: list[tuple[int, int | None, list[int]]] = [
        (len(match.log), match.to_act, match.legal_actions())
    ]
    while not match.over:
        assert len(marks) <= MAX_STEPS
        seat = match.to_act
        assert seat is not None
        match.apply(seat, choose(rng, match.legal_actions()))
        marks.append((len(match.log), match.to_act, match.legal_actions()))
    for replayed in (replay(match.log), replay(match.log, seed=seed)):
        assert replayed.over and replayed.log == match.log
        assert (replayed.totals, replayed.winners) == (match.totals, match.winners)
    cut, to_act, legal = data.draw(st.sampled_from(marks), label="prefix")
    partial = replay(
        match.log[:cut], seed=data.draw(st.sampled_from([None, seed]), label="with seed")
    )
    assert partial.log == match.log[:cut]
    assert (partial.to_act, partial.legal_actions()) == (to_act, legal)
    voluntary = False
    for index, event in enumerate(match.log):
        if isinstance(event, RoundStarted):
            voluntary = event.voluntary_pass
        if index < cut:
            continue
        if isinstance(event, DealerDrawn | TrumpDrawn | Dealt) and partial.pending is not None:
            partial.resolve(event)  # without the seed, a replayed match waits for each deal
        seat = getattr(event, "seat", None)
        action = action_event(event, voluntary=voluntary)
        if action is not None and seat is not None:
            partial.apply(seat, action)
    assert partial.log == match.log
    with pytest.raises(ReplayError) as info:
        replay(match.log, seed=hashlib.sha256(seed).digest())
    assert info.value.index == 0
    where = data.draw(
        st.sampled_from([i for i, e in enumerate(match.log) if isinstance(e, RoundScored)]),
        label="forged",
    )
    forged = list(match.log)
    scored = forged[where]
    assert isinstance(scored, RoundScored)
    forged[where] = replace(scored, scores=(scored.scores[0] + 1, *scored.scores[1:]))
    with pytest.raises(ReplayError) as info:
        replay(forged)
    assert info.value.index == where


def action_event(event: Event, *, voluntary: bool) -> int | None:
    """The seat action an event records (None for chance and derived events); ``voluntary``:
    the event's round allows voluntary passes, so that every pass in it, forced or not, was
    asked of its seat (RULES.md, "Forced pass")."""
    if isinstance(event, CardPlayed):
        return event.card
    if isinstance(event, Passed) and (event.forced is False or voluntary):
        return PASS
    if isinstance(event, SuitExcluded):
        return EXCLUDE + event.suit
    if isinstance(event, TrumpChosen):
        return CHOOSE_TRUMP + event.suit
    return None
