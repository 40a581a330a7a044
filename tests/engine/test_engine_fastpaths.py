"""The engine's fast paths agree with the plain rule functions they stand in for.

Every table, shared instance or incrementally kept value that the hot path uses instead of
calling a rule function is checked here against that function: exhaustively where the
domain is small, and along random matches of every game otherwise.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from cardarena.engine import GAMES, Match, new_match
from cardarena.engine.cards import JOKER_MASK, JOKER_SUIT, JOKERS, MAX_CARD, CardSet, cards_of
from cardarena.engine.decks import (
    FRENCH_52,
    TRIATHLON_39,
    deal,
    deal_bits,
    deck_bits,
    spanish_deck,
)
from cardarena.engine.events import (
    CARD_PLAYED,
    MAX_SEATS,
    PASSED,
    CardPlayed,
    CardsDead,
    Dealt,
    Passed,
    RoundScored,
    RoundStarted,
    TrickWon,
    cards_dead,
    check_players,
    dealt,
    round_scored,
    round_started,
    trick_won,
)
from cardarena.engine.exact import WHOLE_COUNT, add, add_all, fraction, reached
from cardarena.engine.fairdeal import RandomStream
from cardarena.engine.fantan import (
    FAN_TAN_RANKS,
    PLAYABLE_TABLES,
    FanTanRound,
    fan_tan_rank,
    suit_playable,
)
from cardarena.engine.sixes import (
    CARD_RANK,
    CARD_SUIT,
    DEAD_EVENTS,
    DEAD_ZONE_BY_ENDS,
    DECK_OFFSETS,
    OTHER_SUITS,
    PLAYABLE_BY_ENDS,
    SIXES_LAYOUT,
    TRANSITIONS,
    SixesHand,
    dead_zone,
    row_ends,
    score_hand,
)
from cardarena.engine.sixes import suit_playable as sixes_playable
from cardarena.engine.tricks import (
    FOLLOW_MASKS,
    NO_TRUMP,
    TrickRound,
    playable_cards,
    winning_card,
    winning_index,
)

CELLS = [(name, players) for name, spec in GAMES.items() for players in spec.players]
FAN_TAN_ONLY = {"rounds": ["fan_tan"] * 3}
VARIANTS: list[tuple[str, int, dict[str, Any] | None]] = [
    ("pentathlon", 4, {**FAN_TAN_ONLY, "fan_tan": {"voluntary_pass": True}}),
    ("hexathlon", 3, {**FAN_TAN_ONLY, "fan_tan": {"voluntary_pass": True}}),
    ("heptathlon", 5, {"rounds": ["trumps", "finale"], "trumps": {"trump": {"mode": "random"}}}),
    ("crazy_sixes", 3, {"deck": 40, "split": "floor", "pool": "rivals_only"}),
]


def walk(
    game: str, players: int, seed: int, options: dict[str, Any] | None = None
) -> Iterator[Match]:
    """A random match of ``game``, yielded before every action and once at its end."""
    rng = random.Random(seed)
    match = new_match(
        game,
        players=players,
        seed=hashlib.sha256(f"{game}{seed}".encode()).digest(),
        options=options,
    )
    while (seat := match.to_act) is not None:
        yield match
        match.apply(seat, rng.choice(match.legal_actions()))
    yield match


# -- shared events ----------------------------------------------------------------------------


def test_shared_events_equal_fresh_ones() -> None:
    for seat in range(MAX_SEATS):
        assert PASSED[False][seat] == Passed(seat, False)
        assert PASSED[True][seat] == Passed(seat, True)
        assert all(CARD_PLAYED[seat][c] == CardPlayed(seat, c) for c in range(MAX_CARD + 1))
        for mask in (1, 1 << 64, 1 << 111, 3 << 70, 0b10101 << 80):
            assert cards_dead(seat, mask) == CardsDead(seat, CardSet(mask))


def test_trick_won_builds_the_same_frozen_event() -> None:
    fast = trick_won(3, 1, (5, 17, 30, 51), 2)
    plain = TrickWon(3, 1, (5, 17, 30, 51), 2)
    assert fast == plain and hash(fast) == hash(plain) and repr(fast) == repr(plain)
    assert type(fast) is TrickWon and dataclasses.astuple(fast) == dataclasses.astuple(plain)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.seat = 0  # type: ignore[misc]


def test_round_events_built_slot_by_slot_are_the_frozen_events() -> None:
    hands = (CardSet(3 << 64), None, CardSet(1 << 100))
    pairs: list[tuple[RoundStarted | Dealt | RoundScored, RoundStarted | Dealt | RoundScored]] = [
        (round_started(2, "hand", 1, None, 1, False), RoundStarted(2, "hand", 1, None, 1, False)),
        (round_started(0, "trumps", 3, 2, 4, True), RoundStarted(0, "trumps", 3, 2, 4, True)),
        (dealt(5, hands, (2, 0, 1)), Dealt(5, hands, (2, 0, 1))),
        (
            round_scored(1, (Fraction(5, 2), 3), (7, Fraction(1, 3))),
            RoundScored(1, (Fraction(5, 2), 3), (7, Fraction(1, 3))),
        ),
    ]
    for fast, plain in pairs:
        assert fast == plain and hash(fast) == hash(plain) and repr(fast) == repr(plain)
        assert type(fast) is type(plain)
        assert dataclasses.astuple(fast) == dataclasses.astuple(plain)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.round = 9  # type: ignore[misc]


def test_every_game_fits_the_shared_tables() -> None:
    assert max(p for spec in GAMES.values() for p in spec.players) <= MAX_SEATS
    with pytest.raises(ValueError, match="seats"):
        check_players(MAX_SEATS + 1)
    with pytest.raises(ValueError, match="seats"):
        TrickRound(MAX_SEATS + 1, [0] * (MAX_SEATS + 1), 0, lambda r: [])


# -- legal lists ------------------------------------------------------------------------------


def test_cards_of_lists_the_bits_in_order() -> None:
    """The table lookups of ``cards_of`` (French and Spanish blocks) against reading each bit."""
    rng = random.Random(0)
    ids = [*range(55), *range(64, 112), 120, 124, 125, 128, 131]
    spanish = [c for c in ids if 64 <= c < 112]
    for _ in range(20000):
        pool = rng.choice([ids, spanish, ids[:52], ids[:55]])
        mask = sum(1 << c for c in rng.sample(pool, rng.randrange(0, 14)))
        assert cards_of(mask) == [c for c in range(140) if mask >> c & 1]


# -- tricks -----------------------------------------------------------------------------------


def test_follow_masks_give_playable_cards() -> None:
    """``play`` asks ``hand & FOLLOW_MASKS[led] or playable_cards(hand, NO_TRUMP)``."""
    rng = random.Random(1)
    deck = [*FRENCH_52, *JOKERS]
    for _ in range(3000):
        hand = sum(1 << c for c in rng.sample(deck, rng.randrange(1, 14)))
        for led in (0, 1, 2, 3, JOKER_SUIT):
            fast = hand & FOLLOW_MASKS[led] or playable_cards(hand, NO_TRUMP)
            assert fast == playable_cards(hand, led)


def test_winning_card_is_the_card_winning_index_names() -> None:
    rng = random.Random(2)
    deck = [*FRENCH_52, *JOKERS]
    for _ in range(3000):
        trick = rng.sample(deck, rng.randrange(3, 6))
        trump = rng.choice([NO_TRUMP, 0, 1, 2, 3])
        taken = sum(1 << c for c in trick)
        index = winning_index(trick, trump)
        assert trick[index] == winning_card(taken, trick[0], trump)
        if (1 << trick[0]) & JOKER_MASK:
            assert index == 0


# -- Fan Tan and Crazy Sixes tables -----------------------------------------------------------


def test_fan_tan_tables_are_the_rule() -> None:
    assert tuple(fan_tan_rank(c) for c in range(52)) == FAN_TAN_RANKS
    for mode in (False, True):
        for suit in range(4):
            for low in range(14):
                for high in range(14):
                    expected = suit_playable(suit, low, high, six_and_seven=mode)
                    assert PLAYABLE_TABLES[mode][(suit * 14 + low) * 14 + high] == expected


def test_crazy_sixes_tables_are_the_rule() -> None:
    for suit in range(4):
        for low in range(13):
            for high in range(13):
                at = (suit * 13 + low) * 13 + high
                assert PLAYABLE_BY_ENDS[at] == sixes_playable(suit, low, high)
                assert DEAD_ZONE_BY_ENDS[at] == dead_zone(suit, low, high)


def test_crazy_sixes_transitions_are_the_rule() -> None:
    """Each card onto each row it may go down on, in each deck: the row's new ends, the cards
    it kills (the dead zone's new part, but the end it went past, which is on the table) and
    what may go down next, from the rule functions; and nothing else is in the table. A row is
    unopened (0, 0) or holds its six (low <= 6 <= high)."""
    expected = {}
    for size in (48, 40):
        deck = sum(1 << c for c in spanish_deck(size))
        offset = DECK_OFFSETS[deck]
        for card in spanish_deck(48):
            suit, rank = CARD_SUIT[card], CARD_RANK[card]
            for low in range(13):
                for high in range(13):
                    opened = 1 <= low <= 6 <= high
                    if not (opened or low == high == 0) or not (
                        sixes_playable(suit, low, high) >> card & 1
                    ):
                        continue
                    new_low, new_high = row_ends(low, high, rank)
                    ends = {64 + 12 * suit + r - 1 for r in (low, high) if r}
                    killed = dead_zone(suit, new_low, new_high) & ~dead_zone(suit, low, high)
                    killed &= ~sum(1 << c for c in ends)
                    playable = sixes_playable(suit, new_low, new_high) & deck
                    others = OTHER_SUITS[suit]
                    key = offset + card * 169 + low * 13 + high
                    expected[key] = (new_low, new_high, killed & deck, others, playable)
    assert expected == TRANSITIONS
    assert len(set(DECK_OFFSETS.values())) == 2


def test_shared_dead_card_events_are_their_key() -> None:
    for _ in walk("crazy_sixes", 4, 0):
        pass
    assert any(DEAD_EVENTS)
    for seat, events in enumerate(DEAD_EVENTS):
        for cards, event in events.items():
            assert event == CardsDead(seat, CardSet(cards))


def test_crazy_sixes_card_tables_are_the_layout() -> None:
    for card in spanish_deck(48):
        assert CARD_SUIT[card] == SIXES_LAYOUT.suit(card)
        assert CARD_RANK[card] == SIXES_LAYOUT.rank(card)


SIXES_HAND_SLOTS = [k for klass in SixesHand.__mro__ for k in getattr(klass, "__slots__", ())]
"""Every attribute of a hand of Crazy Sixes: its own slots and those of the layout round."""


@pytest.mark.parametrize("options", [None, {"deck": 40}], ids=["48", "40"])
@pytest.mark.parametrize("players", [3, 4])
def test_crazy_sixes_play_equals_the_plain_steps(
    players: int, options: dict[str, Any] | None
) -> None:
    """Before every action of random matches, a copy of the hand played by the rule functions
    one step at a time (``play_plainly``) makes the same events and ends in the same state."""
    for seed in range(4):
        for match in walk("crazy_sixes", players, seed, options):
            rnd = match.round
            if not isinstance(rnd, SixesHand) or rnd.to_act is None:
                continue
            plain = copy.deepcopy(rnd)
            fast = copy.deepcopy(rnd)
            action = match.legal_actions()[seed % len(match.legal_actions())]
            plain_out: list[Any] = []
            fast_out: list[Any] = []
            plain.play_plainly(action, plain_out)
            fast.play(action, fast_out)
            assert fast_out == plain_out
            assert {k: getattr(fast, k) for k in SIXES_HAND_SLOTS} == {
                k: getattr(plain, k) for k in SIXES_HAND_SLOTS
            }


# -- exact scores -----------------------------------------------------------------------------


def test_exact_fractions_are_fractions() -> None:
    for n in [*range(-30, 31), WHOLE_COUNT - 1, WHOLE_COUNT, 10**6]:
        for d in range(1, 13):
            fast, plain = fraction(n, d), Fraction(n, d)
            assert type(fast) is Fraction and fast == plain and hash(fast) == hash(plain)
            assert (fast.numerator, fast.denominator) == (plain.numerator, plain.denominator)
            assert str(fast) == str(plain) and repr(fast) == repr(plain)


def test_exact_sums_and_comparisons_equal_the_plain_operations() -> None:
    rng = random.Random(5)
    values: list[int | Fraction] = [0, 7, -3, Fraction(5, 2), Fraction(-7, 3), Fraction(9, 3)]
    values += [Fraction(rng.randrange(-500, 500), rng.randrange(1, 60)) for _ in range(60)]
    for a in values:
        for b in values:
            fast, plain = add(a, b), a + b
            assert type(fast) is type(plain) and fast == plain
            assert (fast.numerator, fast.denominator) == (plain.numerator, plain.denominator)
    for _ in range(2000):
        totals = rng.sample(values, 4)
        scores = rng.sample(values, 4)
        target = rng.randrange(-10, 20)
        assert reached(totals, target) == (max(totals) >= target)
        assert add_all(totals, scores) == tuple(t + s for t, s in zip(totals, scores, strict=True))
    with pytest.raises(ValueError, match="3 scores for 4 totals"):
        add_all([0] * 4, [0] * 3)


def test_crazy_sixes_scores_equal_fractions_made_plainly() -> None:
    rng = random.Random(6)
    for _ in range(2000):
        players = rng.choice([3, 4])
        placed = [rng.randrange(13) for _ in range(players)]
        dead = [rng.choice([0, 0, rng.randrange(8)]) for _ in range(players)]
        split, pool = rng.choice(["exact", "floor"]), rng.choice(["all_unplaced", "rivals_only"])
        best = max(placed)
        winners = [i for i, p in enumerate(placed) if p == best]
        unplaced = sum(d for i, d in enumerate(dead) if pool == "all_unplaced" or i not in winners)
        share = Fraction(unplaced, len(winners))
        if split == "floor":
            share = Fraction(unplaced // len(winners))
        expected = tuple(
            Fraction(p) + (share + (5 if dead[i] == 0 else 0) if i in winners else 0)
            for i, p in enumerate(placed)
        )
        scores = score_hand(placed, dead, split=split, pool=pool)
        assert scores == expected and all(type(s) is Fraction for s in scores)


# -- state kept incrementally, along random matches -------------------------------------------


@pytest.mark.parametrize(
    ("game", "players", "options"), [*((g, p, None) for g, p in CELLS), *VARIANTS]
)
@pytest.mark.parametrize("seed", range(3))
def test_kept_state_equals_state_from_scratch(
    game: str, players: int, options: dict[str, Any] | None, seed: int
) -> None:
    """The legal mask (and list) each round keeps equals the one worked out from its state; a pending
    deal means no round (Match's invariant); the match's ``to_act`` is its round's; no hand
    holds a card of a Crazy Sixes dead zone."""
    for match in walk(game, players, seed, options):
        rnd = match.round
        assert (match.pending is None) or rnd is None
        assert match.to_act == (None if rnd is None else rnd.to_act)
        if rnd is None:
            continue
        assert isinstance(rnd, TrickRound | FanTanRound | SixesHand)
        assert rnd.legal == rnd._compute_legal()
        assert rnd.legal_cards is None or list(rnd.legal_cards) == cards_of(rnd.legal)
        if isinstance(rnd, TrickRound):
            assert rnd.trick_mask == sum(1 << c for c in rnd.trick) or not rnd.trick
        assert match.legal_actions() == [a for a in range(140) if rnd.legal >> a & 1]
        if isinstance(rnd, SixesHand):
            for suit in range(4):
                zone = dead_zone(suit, rnd.low[suit], rnd.high[suit])
                assert all(not h & zone for h in rnd.hands)


# -- dealing ----------------------------------------------------------------------------------


def reference_shuffle(stream: RandomStream, items: list[int]) -> list[int]:
    """Fisher-Yates from the top with ``uniform``, as RULES.md §4 words it."""
    deck = list(items)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize("deck", [FRENCH_52, TRIATHLON_39, spanish_deck(40), tuple(range(300))])
def test_shuffle_equals_the_plain_fisher_yates(deck: tuple[int, ...]) -> None:
    for n in range(20):
        seed = hashlib.sha256(bytes([n])).digest()
        fast = RandomStream(seed, f"deal/{n}")
        plain = RandomStream(seed, f"deal/{n}")
        assert fast.read(4 * (n % 5)) == plain.read(4 * (n % 5))  # start mid-block too
        assert fast.shuffle(deck) == reference_shuffle(plain, list(deck))
        assert fast.word() == plain.word()  # and leave the stream at the same word


class RiggedStream(RandomStream):
    """A stream whose blocks are chosen by the test, so that words get rejected."""

    def __init__(self, words: list[int]) -> None:
        super().__init__(bytes(32), "rigged")
        self.rigged = words

    def block(self, index: int) -> bytes:
        chunk = self.rigged[8 * index : 8 * index + 8]
        chunk += [7] * (8 - len(chunk))
        return b"".join(w.to_bytes(4, "big") for w in chunk)


def test_shuffle_rejects_exactly_as_uniform_does() -> None:
    rng = random.Random(3)
    top = 2**32 - 1
    for _ in range(200):
        words = [
            rng.choice([top, top - rng.randrange(60), rng.randrange(2**32)]) for _ in range(120)
        ]
        deck = list(range(52))
        assert RiggedStream(words).shuffle(deck) == reference_shuffle(RiggedStream(words), deck)


@pytest.mark.parametrize("deck", [FRENCH_52, TRIATHLON_39, spanish_deck(48), spanish_deck(40)])
def test_a_deck_shuffled_as_its_bits_deals_the_same_hands(deck: tuple[int, ...]) -> None:
    """What Match deals: the deck's bits shuffled and summed, the same hands as its cards."""
    bits, shift = deck_bits(deck)
    for n in range(10):
        seed = hashlib.sha256(bytes([n])).digest()
        order = RandomStream(seed, "deal/0").shuffle(deck)
        shuffled_bits = RandomStream(seed, "deal/0").shuffle(bits)
        assert shuffled_bits == [1 << (card - shift) for card in order]
        for players in (3, 4, 5):
            for dealer in range(players):
                assert deal_bits(shuffled_bits, shift, dealer, players) == deal(
                    order, dealer, players
                )


def test_deal_equals_card_by_card_dealing() -> None:
    """Every deck, whole or not, a seat given one card or none, and cards of two decks."""
    rng = random.Random(4)
    decks = [FRENCH_52, TRIATHLON_39, spanish_deck(48), spanish_deck(40)]
    mixed = [(*spanish_deck(48), 3), (*FRENCH_52, *spanish_deck(40))]
    for players in (3, 4, 5):
        for dealer in range(players):
            for deck in [*decks, *mixed]:
                for size in (len(deck), len(deck) - rng.randrange(3), rng.randrange(2 * players)):
                    order = rng.sample(deck, size)
                    if deck in mixed and size > 2 * players:
                        top = order.index(max(order))  # a Spanish card first, a French one later
                        order[0], order[top] = order[top], order[0]
                    hands = [0] * players
                    for k, card in enumerate(order):
                        hands[(dealer + 1 + k) % players] |= 1 << card
                    assert deal(order, dealer, players) == tuple(hands)
