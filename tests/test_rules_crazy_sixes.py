"""RULES.md §2: Crazy Sixes worked examples and rules."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cardarena.engine import new_match
from cardarena.engine.cards import OROS, CardSet, parse_card, parse_cards, spanish
from cardarena.engine.events import CardPlayed, CardsDead, Passed, RoundScored, RoundStarted
from cardarena.engine.sixes import SIX_OF_OROS, dead_zone, score_hand, suit_playable

from .helpers import fractions, play_out

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
    starts = [i for i, e in enumerate(log) if isinstance(e, RoundStarted)]
    assert len(starts) >= 3
    first_players = []
    for start in starts:
        first = next(e for e in log[start:] if isinstance(e, CardPlayed | Passed))
        first_players.append(first.seat)
        if isinstance(first, CardPlayed):
            assert first.card in spanish_cards("6O 6C 6E 6B")
    opener = first_players[0]
    assert log[starts[0] + 2] == CardPlayed(opener, SIX_OF_OROS)
    assert first_players[1:] == [(opener + k) % 3 for k in range(1, len(starts))]


def test_dead_cards_are_public_events_and_the_hand_ends_with_aces_and_kings() -> None:
    log = play_out(new_match("crazy_sixes", players=4, seed=bytes(32), options={"target_score": 1}))
    played = [e.card for e in log if isinstance(e, CardPlayed)]
    dead = [c for e in log if isinstance(e, CardsDead) for c in e.cards]
    assert len(played) + len(dead) == 48
    aces_kings = spanish_cards("1O 12O 1C 12C 1E 12E 1B 12B")
    assert all(c in played for c in aces_kings)
    assert played[-1] in aces_kings
    assert isinstance(log[-2], RoundScored)


def test_forty_card_deck_deals_ten_or_fourteen() -> None:
    match = new_match("crazy_sixes", players=3, seed=bytes(32), options={"deck": 40})
    assert sorted(h.bit_count() for h in match.hands) == [13, 13, 14]
    assert all(
        not h & parse_cards("8O 9O 8C 9C 8E 9E 8B 9B", spanish_deck=True) for h in match.hands
    )


def test_game_ends_after_the_hand_in_which_a_total_reaches_the_target() -> None:
    match = new_match("crazy_sixes", players=4, seed=bytes(32), options={"target_score": 30})
    log = play_out(match)
    scored = [e for e in log if isinstance(e, RoundScored)]
    assert max(scored[-1].totals) >= 30
    assert all(max(e.totals) < 30 for e in scored[:-1])
    assert match.winners == tuple(s for s, t in enumerate(match.totals) if t == max(match.totals))


def test_card_codes_are_spanish() -> None:
    assert str(spanish_cards("1O 10C 11E 12B")) == "1O 10C 11E 12B"
    assert parse_card("6C", spanish_deck=True) != parse_card("6C")
