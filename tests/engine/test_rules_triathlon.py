"""RULES.md §3: Triathlon worked examples and rules."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from cardarena.engine import (
    GAMES,
    IllegalAction,
    MalformedAction,
    Match,
    OptionError,
    commitment,
    new_match,
    setup,
)
from cardarena.engine.actions import CHOOSE_TRUMP, EXCLUDE, PASS, choose_trump, exclude
from cardarena.engine.cards import JOKER_MASK, JOKERS, CardSet, parse_card, parse_cards
from cardarena.engine.events import (
    Dealt,
    FeatsEarned,
    MatchStarted,
    RoundScored,
    SuitExcluded,
    TrickWon,
    TrumpChosen,
)
from cardarena.engine.triathlon import deal_scores, feats
from cardarena.engine.tricks import playable_cards, winning_index

from ..helpers import actor, fractions, play_out

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


# -- hand-built deals played through a real match ------------------------------------------
#
# In every deal below the leader (the seat after the dealer) holds the nine spades, the three
# Jokers and AD, and the auction makes spades trump. Whatever anyone plays, the leader wins
# every trick: a spade lead is won by the only trumps there are, a led Joker wins, and AD is
# the highest diamond with no trump beside it. So a deal's tricks are 13 for the leader and 0
# for the others, the leader wins the last trick, and (two counts being equal) it is also the
# odd one out: F2 and F3, never F1 (13 is no multiple of three; nor, by default, is 0).


def dealt_triathlon(options: dict[str, Any]) -> Match:
    config = setup("triathlon", players=3, options=options)
    started = MatchStarted(config.game, 3, config.options, commitment(bytes(32)))
    return Match.from_start(started)


def play_leader_takes_all(match: Match) -> RoundScored:
    """Deal and play one deal as above (followers play their lowest legal card)."""
    assert match.pending == "deal"
    dealer = match.dealer
    leader, second = (dealer + 1) % 3, (dealer + 2) % 3
    hands = {
        leader: CardSet(parse_cards("6S 7S 8S 9S 10S JS QS KS AS AD") | JOKER_MASK),
        second: CardSet.parse("6C 7C 8C 9C 10C JC QC KC AC 6D 7D 8D 9D"),
        dealer: CardSet.parse("6H 7H 8H 9H 10H JH QH KH AH 10D JD QD KD"),
    }
    dealt = tuple(hands[s] for s in range(3))
    match.resolve(Dealt(match.round_index, dealt, (13, 13, 13)))
    start = len(match.log)
    match.apply(leader, exclude(C))
    match.apply(second, exclude(D))
    match.apply(dealer, choose_trump(S))
    while match.to_act is not None:
        match.apply(match.to_act, match.legal_actions()[0])
    events = match.log[start:]
    assert [e.seat for e in events if isinstance(e, TrickWon)] == [leader] * 13
    (scored,) = [e for e in events if isinstance(e, RoundScored)]
    return scored


@pytest.mark.parametrize(
    ("max_deals", "totals", "winners"),
    [
        # Deal k is led by seat k + 1 (mod 3), who scores 13 + 10 (F2) + 20 (F3, no F1
        # anywhere) = 43.
        (1, (0, 43, 0), (1,)),
        (2, (0, 43, 43), (1, 2)),
        (3, (43, 43, 43), (0, 1, 2)),
        (4, (43, 86, 43), (1,)),
    ],
)
def test_max_deals_ends_the_game_after_exactly_that_many_deals(
    max_deals: int, totals: tuple[int, ...], winners: tuple[int, ...]
) -> None:
    """§3.5: nobody ever holds all three feats here (F1 is never earned), so the game ends
    after deal ``max_deals`` and not one deal sooner. Ties are joint wins."""
    match = dealt_triathlon({"max_deals": max_deals})
    for deal in range(max_deals):
        assert not match.over and match.pending == "deal", f"ended before deal {deal}"
        assert play_leader_takes_all(match).scores == tuple(
            43 if seat == (deal + 1) % 3 else 0 for seat in range(3)
        )
    assert match.over and match.pending is None
    assert len([e for e in match.log if isinstance(e, FeatsEarned)]) == max_deals
    assert match.totals == totals and match.winners == winners


def test_max_deals_defaults_to_50() -> None:
    """§3.5 and the option schema: ``max_deals`` is 50 unless told otherwise; played out,
    a game in which nobody earns every feat ends after deal 50. Seats 1 and 2 led 17 deals
    each (43 × 17 = 731), seat 0 led 16 (688): seats 1 and 2 are joint winners."""
    schema = GAMES["triathlon"].options.describe()["properties"]
    assert schema["max_deals"]["default"] == 50
    assert set(schema) == {"zero_is_multiple", "end", "max_deals", "first_dealer"}
    match = dealt_triathlon({})
    assert match.options["max_deals"] == 50
    for deal in range(50):
        assert not match.over, f"ended before deal {deal}"
        play_leader_takes_all(match)
    assert match.over
    assert match.totals == (688, 731, 731) and match.winners == (1, 2)


def test_target_score_is_no_option_of_triathlon() -> None:
    """Triathlon ends on feats or ``max_deals``; a target score belongs to Crazy Sixes."""
    with pytest.raises(OptionError, match="target_score"):
        setup("triathlon", players=3, options={"target_score": 100})


@pytest.mark.parametrize(
    ("tricks", "last", "plain", "zero_counts"),
    [
        # RULES.md §3.6 row three. With zero a multiple, B's 0 earns F1 (+10); A is unchanged
        # (3 + 10 + 10 + 10 + 100, B = 10 either way, A already having F1).
        ((3, 0, 10), 0, (133, 0, 10), (133, 10, 10)),
        # No F1 anywhere unless zero counts: B's middle bonus drops from 20 to 10 when A's 0
        # earns F1. C: 8 + 10 (F2) both times.
        ((0, 5, 8), 2, (0, 25, 18), (10, 15, 18)),
    ],
)
def test_zero_is_multiple_changes_the_scores(
    tricks: tuple[int, ...],
    last: int,
    plain: tuple[int, ...],
    zero_counts: tuple[int, ...],
) -> None:
    assert deal_scores(tricks, feats(tricks, last)) == fractions(*plain)
    earned = feats(tricks, last, zero_is_multiple=True)
    assert deal_scores(tricks, earned) == fractions(*zero_counts)


def test_zero_is_multiple_in_a_match_scores_and_ends_the_game() -> None:
    """The same two deals with and without ``zero_is_multiple``. Without: 43 for the leader,
    0 for the others, and nobody has F1, so the game goes on. With: each 0 earns F1 (10), the
    middle bonus is then 10 and the leader scores 13 + 10 + 10 = 33; after the second deal
    seats 1 and 2 have each earned all three feats over the two deals: the game ends there."""
    plain = dealt_triathlon({})
    assert [play_leader_takes_all(plain).scores for _ in range(2)] == [(0, 43, 0), (0, 0, 43)]
    assert not plain.over and plain.totals == (0, 43, 43)
    zero = dealt_triathlon({"zero_is_multiple": True})
    assert [play_leader_takes_all(zero).scores for _ in range(2)] == [(10, 33, 10), (10, 10, 33)]
    assert zero.over and zero.totals == (20, 43, 43) and zero.winners == (1, 2)
