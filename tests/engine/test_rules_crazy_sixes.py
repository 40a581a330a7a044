"""RULES.md §2: Crazy Sixes worked examples and rules."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest

from cardarena.engine import GAMES, Match, commitment, new_match, setup
from cardarena.engine import events as ev
from cardarena.engine.cards import ESPADAS, OROS, CardSet, parse_card, parse_cards, spanish
from cardarena.engine.decks import spanish_deck
from cardarena.engine.sixes import SIX_OF_OROS, dead_zone, score_hand, suit_playable

from ..helpers import fractions, play_out
from .deal_sizes import cards_dealt

OROS_I, COPAS_I, ESPADAS_I, BASTOS_I = 0, 1, 2, 3


def spanish_cards(codes: str) -> CardSet:
    return CardSet(parse_cards(codes, spanish_deck=True))


@pytest.mark.parametrize(
    ("placed", "scores"),
    [
        ((11, 9, 8, 6), (25, 9, 8, 6)),
        ((10, 10, 8, 6), (17, 17, 8, 6)),
        ((12, 9, 8, 7), (29, 9, 8, 7)),
        ((12, 12, 7, 5), (23, 23, 7, 5)),
    ],
)
def test_worked_scoring_examples(placed: tuple[int, ...], scores: tuple[int, ...]) -> None:
    dead = tuple(12 - p for p in placed)
    assert score_hand(placed, dead) == tuple(Fraction(s) for s in scores)


def test_exact_split_is_a_fraction_and_floor_drops_the_remainder() -> None:
    placed, dead = (10, 10, 10, 5), (2, 2, 1, 8)
    assert score_hand(placed, dead) == (Fraction(43, 3),) * 3 + (Fraction(5),)
    assert score_hand(placed, dead, split="floor") == (Fraction(14),) * 3 + (Fraction(5),)


def test_rivals_only_pool_and_clean_bonus_not_split() -> None:
    placed, dead = (12, 12, 7, 5), (0, 0, 5, 7)
    assert score_hand(placed, dead, pool="rivals_only") == fractions(23, 23, 7, 5)
    placed, dead = (11, 9, 8, 6), (1, 3, 4, 6)
    assert score_hand(placed, dead, pool="rivals_only") == fractions(24, 9, 8, 6)


def test_legality_and_dead_cards_worked_example() -> None:
    table = {OROS_I: (4, 9), COPAS_I: (6, 12), ESPADAS_I: (1, 6), BASTOS_I: (0, 0)}
    dead = CardSet(sum(dead_zone(s, lo, hi) for s, (lo, hi) in table.items()))
    on_table = spanish_cards("4O 6O 9O 6C 12C 1E 6E")
    assert dead - on_table == spanish_cards("5O 7O 8O 7C 8C 9C 10C 11C 2E 3E 4E 5E")
    playable = sum(suit_playable(s, lo, hi) for s, (lo, hi) in table.items())
    hand = parse_cards("1O 11O 2C 9E 6B 7B", spanish_deck=True)
    assert CardSet(hand & playable) == spanish_cards("1O 11O 2C 9E 6B")


def test_first_hand_opens_with_six_of_oros_even_holding_other_sixes() -> None:
    match = new_match("crazy_sixes", players=4, seed=bytes(32))
    holder = next(s for s in range(4) if match.hands[s] >> SIX_OF_OROS & 1)
    assert match.to_act == holder
    assert match.legal_actions() == [spanish(OROS, 6)]


def test_later_hands_rotate_the_starter_and_any_six_opens() -> None:
    match = new_match("crazy_sixes", players=3, seed=bytes(32), options={"target_score": 200})
    log = play_out(match)
    starts = [i for i, e in enumerate(log) if isinstance(e, ev.RoundStarted)]
    assert len(starts) >= 3
    first_players = []
    for start in starts:
        first = next(e for e in log[start:] if isinstance(e, ev.CardPlayed | ev.Passed))
        first_players.append(first.seat)
        if isinstance(first, ev.CardPlayed):
            assert first.card in spanish_cards("6O 6C 6E 6B")
    opener = first_players[0]
    assert log[starts[0] + 2] == ev.CardPlayed(opener, SIX_OF_OROS)
    assert first_players[1:] == [(opener + k) % 3 for k in range(1, len(starts))]


def test_dead_cards_are_public_events_and_the_hand_ends_with_aces_and_kings() -> None:
    log = play_out(new_match("crazy_sixes", players=4, seed=bytes(32), options={"target_score": 1}))
    played = [e.card for e in log if isinstance(e, ev.CardPlayed)]
    dead = [c for e in log if isinstance(e, ev.CardsDead) for c in e.cards]
    assert len(played) + len(dead) == 48
    aces_kings = spanish_cards("1O 12O 1C 12C 1E 12E 1B 12B")
    assert all(c in played for c in aces_kings)
    assert played[-1] in aces_kings
    assert isinstance(log[-2], ev.RoundScored)


def test_forty_card_deck_deals_ten_or_fourteen() -> None:
    match = new_match("crazy_sixes", players=3, seed=bytes(32), options={"deck": 40})
    assert sorted(h.bit_count() for h in match.hands) == [13, 13, 14]
    assert all(
        not h & parse_cards("8O 9O 8C 9C 8E 9E 8B 9B", spanish_deck=True) for h in match.hands
    )


def test_game_ends_after_the_hand_in_which_a_total_reaches_the_target() -> None:
    match = new_match("crazy_sixes", players=4, seed=bytes(32), options={"target_score": 30})
    log = play_out(match)
    scored = [e for e in log if isinstance(e, ev.RoundScored)]
    assert max(scored[-1].totals) >= 30
    assert all(max(e.totals) < 30 for e in scored[:-1])
    assert match.winners == tuple(s for s, t in enumerate(match.totals) if t == max(match.totals))


def test_card_codes_are_spanish() -> None:
    assert str(spanish_cards("1O 10C 11E 12B")) == "1O 10C 11E 12B"
    assert parse_card("6C", spanish_deck=True) != parse_card("6C")


# -- hand-built deals played through a real match ------------------------------------------
#
# Each deal below is resolved into a match that has no seed, so the cards are the test's own;
# each seat then plays its plan card by card (an illegal card would raise). Every expected
# score is worked out by hand from RULES.md §2.3 in the comment beside it.


def dealt_sixes(players: int, options: dict[str, Any]) -> Match:
    """A Crazy Sixes match whose deals come from the test (see :func:`play_hand`)."""
    config = setup("crazy_sixes", players=players, options=options)
    started = ev.MatchStarted(config.game, players, config.options, commitment(bytes(32)))
    return Match.from_start(started)


def play_plans(match: Match, plans: Sequence[str]) -> list[ev.Event]:
    """Play the hand in progress to its end, each seat its plan in order; the events."""
    start = len(match.log)
    queues = [deque(parse_card(c, spanish_deck=True) for c in plan.split()) for plan in plans]
    while match.to_act is not None:
        seat = match.to_act
        match.apply(seat, queues[seat].popleft())
    assert all(not q for q in queues), "the hand ended before every seat played its plan"
    return match.log[start:]


def play_hand(match: Match, hands: Sequence[str], plans: Sequence[str]) -> list[ev.Event]:
    """Deal ``hands`` (by seat), play every seat's ``plans`` in order; the hand's events."""
    assert match.pending == "deal"
    dealt = tuple(spanish_cards(h) for h in hands)
    events = match.resolve(ev.Dealt(match.round_index, dealt, tuple(len(h) for h in dealt)))
    return events + play_plans(match, plans)


def scored(events: list[ev.Event]) -> ev.RoundScored:
    (event,) = [e for e in events if isinstance(e, ev.RoundScored)]
    return event


OROS_12 = "1O 2O 3O 4O 5O 6O 7O 8O 9O 10O 11O 12O"
COPAS_12 = "1C 2C 3C 4C 5C 6C 7C 8C 9C 10C 11C 12C"
ESPADAS_12 = "1E 2E 3E 4E 5E 6E 7E 8E 9E 10E 11E 12E"
BASTOS_12 = "1B 2B 3B 4B 5B 6B 7B 8B 9B 10B 11B 12B"
ONE_SUIT_EACH = (OROS_12, COPAS_12, ESPADAS_12, BASTOS_12)
# Every seat plays its own suit outwards from the six, one rank at a time: nothing dies.
ALL_PLACED = (
    "6O 5O 4O 3O 2O 1O 7O 8O 9O 10O 11O 12O",
    "6C 5C 4C 3C 2C 1C 7C 8C 9C 10C 11C 12C",
    "6E 5E 4E 3E 2E 1E 7E 8E 9E 10E 11E 12E",
    "6B 5B 4B 3B 2B 1B 7B 8B 9B 10B 11B 12B",
)
# Seats 0 and 1 place their whole suit; seat 2 jumps 6E -> 1E (2E..5E die: 4 cards), seat 3
# jumps 6B -> 12B (7B..11B die: 5 cards). Placed 12, 12, 8, 7; U = 9; the winners are 0 and 1.
TWO_CLEAN_WINNERS = (
    "6O 5O 4O 3O 2O 1O 7O 8O 9O 10O 11O 12O",
    "6C 7C 8C 9C 10C 11C 12C 5C 4C 3C 2C 1C",
    "6E 1E 7E 8E 9E 10E 11E 12E",
    "6B 12B 5B 4B 3B 2B 1B",
)


def test_tied_hand_winners_are_joint_game_winners() -> None:
    """Conventions, "Winning and ties": the winners share U = 9 exactly (9/2 each) and each
    adds +5 for a whole hand placed: 12 + 9/2 + 5 = 43/2 for seats 0 and 1, 8 and 7 for the
    others. The target is reached at once, and both seats tied on the highest total win."""
    match = dealt_sixes(4, {"target_score": 1})
    events = play_hand(match, ONE_SUIT_EACH, TWO_CLEAN_WINNERS)
    assert [(e.seat, e.cards) for e in events if isinstance(e, ev.CardsDead)] == [
        (2, spanish_cards("2E 3E 4E 5E")),
        (3, spanish_cards("7B 8B 9B 10B 11B")),
    ]
    assert match.over
    assert match.totals == (Fraction(43, 2), Fraction(43, 2), 8, 7)
    assert match.winners == (0, 1)
    assert events[-1] == ev.MatchEnded(match.totals, (0, 1))


def test_floor_split_adds_the_whole_hand_bonus_whole() -> None:
    """§2.4 ``split: "floor"``: each winner gets U // |W| = 9 // 2 = 4, and the +5 of a whole
    hand is added whole, not pooled nor split: 12 + 4 + 5 = 21 (a split +5 would give 19)."""
    match = dealt_sixes(4, {"target_score": 1, "split": "floor"})
    play_hand(match, ONE_SUIT_EACH, TWO_CLEAN_WINNERS)
    assert match.totals == fractions(21, 21, 8, 7)
    assert match.winners == (0, 1)


# 40 cards, 3 players, dealer 0: seat 1 (after the dealer) holds 14 cards, seats 2 and 0 13.
FORTY_UNEVEN = (
    "1O 2O 3O 4O 5O 6O 7O 10O 11O 12O 6C 7C 10C",
    "1E 2E 3E 4E 5E 6E 7E 10E 11E 12E 3C 4C 5C 11C",
    "1B 2B 3B 4B 5B 6B 7B 10B 11B 12B 1C 2C 12C",
)
# Seat 0 places all 13. Seat 1 places 13 of 14: its 11C dies when seat 2 plays 12C on a copas
# row whose top is 10C. Seat 2 jumps 6B -> 1B (2B..5B die) and places 9. Each 10 played on a 7
# (10C, 10B, 10O, 10E) kills nothing: in the 40-card deck they are neighbours.
FORTY_UNEVEN_PLANS = (
    "6O 6C 7C 10C 5O 4O 3O 2O 1O 7O 10O 11O 12O",
    "6E 5C 4C 3C 5E 4E 3E 2E 1E 7E 10E 11E 12E",
    "6B 1B 7B 2C 1C 12C 10B 11B 12B",
)


@pytest.mark.parametrize(
    ("split", "totals"),
    [
        # U = 1 + 4 = 5 shared by seats 0 and 1 (13 placed each); only seat 0 placed its
        # whole hand. Exact: 13 + 5/2 + 5 = 41/2 and 13 + 5/2 = 31/2.
        ("exact", (Fraction(41, 2), Fraction(31, 2), Fraction(9))),
        # Floor: 5 // 2 = 2 each; seat 0's +5 stays its own: 20 and 15 (a pooled bonus would
        # give both 13 + (5 + 5) // 2 = 18).
        ("floor", fractions(20, 15, 9)),
    ],
)
def test_split_with_one_clean_and_one_unclean_winner(
    split: str, totals: tuple[Fraction, ...]
) -> None:
    match = dealt_sixes(3, {"deck": 40, "target_score": 1, "split": split})
    events = play_hand(match, FORTY_UNEVEN, FORTY_UNEVEN_PLANS)
    assert [(e.seat, e.cards) for e in events if isinstance(e, ev.CardsDead)] == [
        (2, spanish_cards("2B 3B 4B 5B")),
        (1, spanish_cards("11C")),
    ]
    assert match.totals == totals
    assert match.winners == (0,)


def test_default_target_of_100_ends_the_game_at_the_hand_that_reaches_it() -> None:
    """§2.3/§2.4: ``target_score`` defaults to 100 and the game ends after the hand at whose
    end a total is at least 100. Each hand: seat 0 places all 12 oros; seat 1 jumps 6C -> 9C
    (2 dead), seats 2 and 3 jump 6 -> 10 (3 dead each). Seat 0 alone wins: 12 + U (8) + 5 = 25,
    the others 10, 9, 9. After four hands seat 0 has exactly 100: the game ends there."""
    schema = GAMES["crazy_sixes"].options.describe()["properties"]
    assert schema["target_score"]["default"] == 100
    match = dealt_sixes(4, {})
    assert match.options["target_score"] == 100
    plans = (
        "6O 5O 4O 3O 2O 1O 7O 8O 9O 10O 11O 12O",
        "6C 9C 10C 11C 12C 5C 4C 3C 2C 1C",
        "6E 10E 11E 12E 5E 4E 3E 2E 1E",
        "6B 10B 11B 12B 5B 4B 3B 2B 1B",
    )
    totals = []
    for hand in range(4):
        assert not match.over, f"the game ended before hand {hand}"
        events = play_hand(match, ONE_SUIT_EACH, plans)
        assert scored(events).scores == fractions(25, 10, 9, 9)
        totals.append(scored(events).totals)
    assert totals == [
        fractions(25, 10, 9, 9),
        fractions(50, 20, 18, 18),
        fractions(75, 30, 27, 27),
        fractions(100, 40, 36, 36),
    ]
    assert match.over and match.winners == (0,)


def test_a_later_starter_without_a_six_passes_and_the_pass_scores_nothing() -> None:
    """§2.2 rule 1: hand 2 is started by the seat after hand 1's starter (seat 0 held 6O, so
    seat 1). Seat 1 holds no six: it passes at once (forced, automatic) and seat 2 must open
    with a six. Everybody then places a whole hand: 12 + 0 + 5 = 17 each, seat 1 included,
    so its pass is worth nothing."""
    match = dealt_sixes(4, {"target_score": 18})
    first = play_hand(match, ONE_SUIT_EACH, ALL_PLACED)
    assert scored(first).scores == fractions(17, 17, 17, 17)
    assert not any(isinstance(e, ev.Passed) for e in first)
    no_six_for_seat_1 = (
        "1O 2O 3O 4O 5O 6O 8O 9O 10O 11O 12O 6C",
        "1C 2C 3C 4C 5C 7C 8C 9C 10C 11C 12C 7O",
        ESPADAS_12,
        BASTOS_12,
    )
    hands = tuple(spanish_cards(h) for h in no_six_for_seat_1)
    events = match.resolve(ev.Dealt(1, hands, (12, 12, 12, 12)))
    assert events == [ev.Dealt(1, hands, (12, 12, 12, 12)), ev.Passed(1, True)]
    assert match.to_act == 2 and match.legal_actions() == [spanish(ESPADAS, 6)]
    plans = (
        "6C 6O 5O 4O 3O 2O 1O 8O 9O 10O 11O 12O",
        "5C 7O 4C 3C 2C 1C 7C 8C 9C 10C 11C 12C",
        "6E 5E 4E 3E 2E 1E 7E 8E 9E 10E 11E 12E",
        "6B 5B 4B 3B 2B 1B 7B 8B 9B 10B 11B 12B",
    )
    second = events + play_plans(match, plans)
    assert [e for e in second if isinstance(e, ev.Passed)] == [ev.Passed(1, True)]
    assert scored(second).scores == fractions(17, 17, 17, 17)
    assert match.totals == fractions(34, 34, 34, 34)
    assert match.over and match.winners == (0, 1, 2, 3)


def test_forty_card_deck_seven_and_ten_are_neighbours() -> None:
    """§2.1/§2.2 with ``deck: 40``: above a 7 the next card is the 10, so 10 on 7 kills
    nothing; 10 on a lone 6 kills only the 7. Placed 10, 9, 5, 10; U = 1 + 5 = 6 shared by
    seats 0 and 3, both clean: 10 + 3 + 5 = 18; seats 1 and 2 score 9 and 5."""
    match = dealt_sixes(4, {"deck": 40, "target_score": 1})
    forty = tuple(
        " ".join(c for c in suit.split() if c[:-1] not in ("8", "9")) for suit in ONE_SUIT_EACH
    )
    hands = tuple(spanish_cards(h) for h in forty)
    match.resolve(ev.Dealt(0, hands, (10, 10, 10, 10)))

    def play(seat: int, code: str) -> list[ev.Event]:
        assert match.to_act == seat
        return match.apply(seat, parse_card(code, spanish_deck=True))

    for seat, code in enumerate(["6O", "6C", "6E", "6B", "7O"]):
        play(seat % 4, code)
    # copas {6}: 10C jumps the 7C alone (there is no 8C or 9C), which dies in seat 1's hand.
    assert play(1, "10C")[1:] == [ev.CardsDead(1, spanish_cards("7C"))]
    assert CardSet(match.hands[1]) == spanish_cards("1C 2C 3C 4C 5C 11C 12C")
    play(2, "7E")
    play(3, "5B")
    # oros {6, 7}: the 10O is the card just above; with copas {6, 10} the 7C is gone, 11C next.
    assert CardSet.of(match.legal_actions()) == spanish_cards("1O 2O 3O 4O 5O 10O 11O 12O")
    assert play(0, "10O")[1:] == [], "10 on 7 kills nothing"
    assert CardSet.of(match.legal_actions()) == spanish_cards("1C 2C 3C 4C 5C 11C 12C")
    play(1, "11C")
    # espadas {6, 7}: 11E jumps the 10E only.
    assert play(2, "11E")[1:] == [ev.CardsDead(2, spanish_cards("10E"))]
    plans = (
        "11O 12O 5O 4O 3O 2O 1O",
        "12C 5C 4C 3C 2C 1C",
        "12E 1E",
        "4B 3B 2B 1B 7B 10B 11B 12B",
    )
    later = play_plans(match, plans)
    assert [e for e in later if isinstance(e, ev.CardsDead)] == [
        ev.CardsDead(2, spanish_cards("2E 3E 4E 5E"))
    ]
    assert match.totals == fractions(18, 9, 5, 18)
    assert match.winners == (0, 3)


@pytest.mark.parametrize(
    ("players", "deck", "dealer", "sizes"),
    [
        (3, 48, 0, (16, 16, 16)),
        (4, 48, 0, (12, 12, 12, 12)),
        (4, 40, 0, (10, 10, 10, 10)),
        (4, 40, 2, (10, 10, 10, 10)),
        (3, 40, 0, (13, 14, 13)),
        (3, 40, 1, (13, 13, 14)),
        (3, 40, 2, (14, 13, 13)),
    ],
)
def test_every_card_is_dealt_in_hands_of_the_rule_sizes(
    players: int, deck: int, dealer: int, sizes: tuple[int, ...]
) -> None:
    """§2.1: 48 cards give 16 each (3 players) or 12 (4); 40 give 10 each (4) or 14/13/13 (3),
    the extra card to the seat after the dealer."""
    options = {"deck": deck, "first_dealer": dealer}
    whole = cards_dealt("crazy_sixes", players, options, sizes)
    assert CardSet(whole) == CardSet.of(spanish_deck(deck))
