"""RULES.md §3: Triathlon worked examples and rules."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cardarena.engine import IllegalAction, MalformedAction, new_match
from cardarena.engine.actions import CHOOSE_TRUMP, EXCLUDE, PASS, choose_trump, exclude
from cardarena.engine.cards import JOKERS, CardSet, parse_card, parse_cards
from cardarena.engine.events import FeatsEarned, SuitExcluded, TrumpChosen
from cardarena.engine.triathlon import deal_scores, feats
from cardarena.engine.tricks import playable_cards, winning_index

from .helpers import actor, play_out

C, D, H, S = 0, 1, 2, 3


@pytest.mark.parametrize(
    ("tricks", "last", "scores"),
    [
        ((3, 4, 6), 2, (13, 14, 26)),
        ((1, 4, 8), 0, (11, 24, 8)),
        ((3, 0, 10), 0, (133, 0, 10)),
        ((5, 5, 3), 1, (5, 15, 23)),
    ],
)
def test_worked_scoring_examples(
    tricks: tuple[int, ...], last: int, scores: tuple[int, ...]
) -> None:
    earned = feats(tricks, last)
    assert deal_scores(tricks, earned) == tuple(Fraction(s) for s in scores)


def test_exactly_one_middle_feat_and_zero_is_multiple_option() -> None:
    assert [sorted(f) for f in feats((3, 0, 10), 0)] == [["last", "middle", "multiple"], [], []]
    assert [sorted(f) for f in feats((3, 0, 10), 0, zero_is_multiple=True)] == [
        ["last", "middle", "multiple"],
        ["multiple"],
        [],
    ]


@pytest.mark.parametrize(
    ("trick", "winner"),
    [("10S AS 6H", 2), ("JK AH JK", 0), ("7C JK 8C", 2), ("KD AD AC", 1)],
)
def test_trick_winners_with_hearts_trump(trick: str, winner: int) -> None:
    cards = [parse_card(c) for c in trick.split()]
    # a second Joker in a trick is another of the three Jokers
    cards = [JOKERS[i] if c in JOKERS else c for i, c in enumerate(cards)]
    assert winning_index(cards, H) == winner


def test_must_follow_suit_not_joker() -> None:
    assert CardSet(playable_cards(parse_cards("9C") | 1 << JOKERS[0], C)) == CardSet.parse("9C")


def test_jokers_are_one_action_and_free_after_a_led_joker() -> None:
    hand = parse_cards("9C 10D") | 1 << JOKERS[1] | 1 << JOKERS[2]
    legal = CardSet(playable_cards(hand, -1))
    assert legal == CardSet.parse("9C 10D") | CardSet.of([JOKERS[1]])
    assert CardSet(playable_cards(hand, 8)) == legal  # a Joker was led: anything goes


def test_auction_order_and_trump_choice() -> None:
    match = new_match("triathlon", players=3, seed=bytes(32), options={"first_dealer": 1})
    assert match.to_act == 2
    assert match.legal_actions() == [EXCLUDE + s for s in range(4)]
    match.apply(2, exclude(S))
    assert match.to_act == 0
    assert match.legal_actions() == [EXCLUDE + s for s in (C, D, H)]
    with pytest.raises(IllegalAction):
        match.apply(0, exclude(S))
    match.apply(0, exclude(C))
    assert match.to_act == 1
    assert match.legal_actions() == [CHOOSE_TRUMP + D, CHOOSE_TRUMP + H]
    with pytest.raises(IllegalAction):
        match.apply(1, PASS)
    events = match.apply(1, choose_trump(H))
    assert events == [TrumpChosen(1, H)]
    assert match.to_act == 2 and match.trump == H
    assert [e for e in match.log if isinstance(e, SuitExcluded)] == [
        SuitExcluded(2, S),
        SuitExcluded(0, C),
    ]


def test_any_joker_id_plays_a_joker() -> None:
    for seed in range(40):
        match = new_match("triathlon", players=3, seed=bytes([seed]) * 32)
        for action in (exclude(C), exclude(D), choose_trump(H)):
            match.apply(actor(match), action)
        hand = match.hands[actor(match)]
        held = [j for j in JOKERS if hand >> j & 1]
        missing = [j for j in JOKERS if not hand >> j & 1]
        if held and missing:
            event = match.apply(actor(match), missing[0])[0]
            assert getattr(event, "card", None) == held[0]
            return
    pytest.fail("no seed dealt a leader some but not all Jokers")


def test_spanish_card_is_malformed_in_triathlon() -> None:
    match = new_match("triathlon", players=3, seed=bytes(32))
    with pytest.raises(MalformedAction, match="not a card of this game"):
        match.apply(actor(match), 64)


def test_game_ends_when_a_player_has_all_three_feats() -> None:
    for seed in range(5):
        match = new_match("triathlon", players=3, seed=bytes([seed]) * 32)
        log = play_out(match, rng_seed=seed)
        deals = [e for e in log if isinstance(e, FeatsEarned)]
        ever: list[set[str]] = [set(), set(), set()]
        for index, deal in enumerate(deals):
            assert sum("middle" in f for f in deal.feats) == 1
            for seat, f in enumerate(deal.feats):
                ever[seat] |= set(f)
            done = any(len(f) == 3 for f in ever)
            assert done == (index == len(deals) - 1)


def test_max_deals_and_triathlon_in_one_deal() -> None:
    match = new_match("triathlon", players=3, seed=bytes(32), options={"max_deals": 2})
    deals = [e for e in play_out(match) if isinstance(e, FeatsEarned)]
    assert len(deals) <= 2
    match = new_match(
        "triathlon",
        players=3,
        seed=bytes(32),
        options={"end": "triathlon_in_one_deal", "max_deals": 200},
    )
    deals = [e for e in play_out(match) if isinstance(e, FeatsEarned)]
    assert any(len(f) == 3 for f in deals[-1].feats)
    assert all(all(len(f) < 3 for f in d.feats) for d in deals[:-1])
