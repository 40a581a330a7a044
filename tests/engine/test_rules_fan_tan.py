"""RULES.md §1.4: Fan Tan, the Norwegian family's layout round: its worked examples, the ends
of its rows, its opening, voluntary passes and deals, on their own and in a match."""

from __future__ import annotations

from typing import Any

import pytest

from cardarena.engine import IllegalAction, new_match
from cardarena.engine.cards import CardSet, card_code, parse_card, parse_cards
from cardarena.engine.events import Passed
from cardarena.engine.fantan import suit_playable

from .deal_sizes import cards_dealt
from .norwegian_deals import C, D, H, S, deal_hands, dealt_norwegian

# -- §1.4 Fan Tan ------------------------------------------------------------------------


def table_playable(ends: dict[int, tuple[int, int]], *, six_and_seven: bool) -> int:
    """The cards that may go down next on a table whose suits have these (low, high) ends."""
    playable = 0
    for suit, (low, high) in ends.items():
        playable |= suit_playable(suit, low, high, six_and_seven=six_and_seven)
    return playable


def test_fan_tan_plain_worked_example() -> None:
    playable = table_playable({H: (5, 9), S: (7, 7), C: (0, 0), D: (0, 0)}, six_and_seven=False)
    hand = parse_cards("4H 10H 6S 8C 7D")
    assert CardSet(hand & playable) == CardSet.parse("4H 10H 6S 7D")


def test_fan_tan_six_and_seven_worked_example() -> None:
    playable = table_playable({H: (0, 9), S: (4, 0), C: (0, 0), D: (0, 0)}, six_and_seven=True)
    hand = parse_cards("6H 10H 3S 8S 5C 6C")
    assert CardSet(hand & playable) == CardSet.parse("6H 10H 3S 6C")


def test_fan_tan_ends_of_rows_ace_low_king_high() -> None:
    assert CardSet(suit_playable(H, 1, 13, six_and_seven=False)) == CardSet()
    assert CardSet(suit_playable(H, 2, 12, six_and_seven=False)) == CardSet.parse("AH KH")
    assert CardSet(suit_playable(H, 1, 13, six_and_seven=True)) == CardSet()


def _fan_tan_match(**fan_tan: Any) -> Any:
    options = {"rounds": ["fan_tan"], "fan_tan": fan_tan}
    return new_match("pentathlon", players=4, seed=bytes(32), options=options)


def test_fan_tan_opens_with_seven_of_hearts_from_its_holder() -> None:
    match = _fan_tan_match()
    holder = next(s for s in range(4) if match.hands[s] >> parse_card("7H") & 1)
    assert match.to_act == holder
    assert match.legal_actions() == [parse_card("7H")]


def test_fan_tan_voluntary_pass_but_not_on_the_opening_and_not_forever() -> None:
    match = _fan_tan_match(voluntary_pass=True)
    assert match.legal_actions() == [parse_card("7H")]
    match.apply(match.to_act, parse_card("7H"))
    forced = 0
    for _ in range(4):
        legal = match.legal_actions()
        assert 120 in legal, "a seat that can play may pass voluntarily until everyone passed"
        # Every pass, forced or chosen, is asked of its seat here: one pass per action.
        (passed,) = match.apply(match.to_act, 120)
        assert isinstance(passed, Passed) and passed.forced == (legal == [120])
        forced += legal == [120]
    assert forced, "the count of passes in succession includes a forced one"
    while match.legal_actions() == [120]:
        match.apply(match.to_act, 120)  # a seat that cannot play is still asked, and passes
    legal = match.legal_actions()
    assert 120 not in legal and legal, "after every seat passed in succession the next must play"
    with pytest.raises(IllegalAction, match="passed in succession"):
        match.apply(match.to_act, 120)


@pytest.mark.parametrize(
    ("players", "dealer", "sizes"),
    [
        (3, 0, (17, 18, 17)),
        (3, 1, (17, 17, 18)),
        (3, 2, (18, 17, 17)),
        (4, 0, (13, 13, 13, 13)),
        (5, 0, (10, 11, 11, 10, 10)),
        (5, 3, (11, 10, 10, 10, 11)),
    ],
)
def test_fan_tan_deals_all_52_cards_extra_ones_after_the_dealer(
    players: int, dealer: int, sizes: tuple[int, ...]
) -> None:
    """§1.1: Fan Tan uses all 52 cards: 18/17/17 with 3 players, 11/11/10/10/10 with 5, the
    extra cards to the first seats after the dealer."""
    options = {"rounds": ["fan_tan"], "first_dealer": dealer}
    assert cards_dealt("pentathlon", players, options, sizes) == (1 << 52) - 1


def test_fan_tan_deal_with_the_extra_card_at_the_dealer_is_refused() -> None:
    """The sizes bind a recorded deal too: with dealer 0 the 18th card is seat 1's."""
    match = dealt_norwegian("pentathlon", 3, {"rounds": ["fan_tan"]})
    deck = [card_code(c) for c in range(52)]
    wrong = (" ".join(deck[:18]), " ".join(deck[18:35]), " ".join(deck[35:]))
    with pytest.raises(ValueError, match="seat 0 was dealt 18 cards, the rules give 17"):
        deal_hands(match, wrong)


@pytest.mark.parametrize(
    ("game", "hands", "plays", "held", "legal", "refused"),
    [
        pytest.param(
            "pentathlon",
            [
                "7H 5H 3C 4C 5C 6C 7C 9C 10C JC QC KC AC",
                "8H 7S 2S 3S 4S 5S 8S 9S 10S JS QS KS AS",
                "6H 4H 10H 6S 8C 7D 2H 3H JH QH KH AH 2C",
                "9H 2D 3D 4D 5D 6D 8D 9D 10D JD QD KD AD",
            ],
            "7H 8H 6H 9H 5H 7S",
            "4H 10H 6S 8C 7D",
            "4H 10H 6S 7D",
            ("8C",),
            id="plain",
        ),
        pytest.param(
            "hexathlon",
            [
                "7H 5S 2C 3C 4C 7C 8C 9C 10C JC QC KC AC",
                "8H 4S 2D 3D 4D 5D 8D 9D 10D JD QD KD AD",
                "6S 6H 10H 3S 8S 5C 6C 2H 3H 4H 5H JH QH",
                "9H KH AH 6D 7D 2S 7S 9S 10S JS QS KS AS",
            ],
            "7H 8H 6S 9H 5S 4S",
            "6H 10H 3S 8S 5C 6C",
            "6H 10H 3S 6C",
            ("8S", "5C", "5H"),
            id="six_and_seven",
        ),
    ],
)
def test_fan_tan_worked_example_in_a_match(
    game: str, hands: list[str], plays: str, held: str, legal: str, refused: tuple[str, ...]
) -> None:
    """§1.7's two worked examples, reached in a real round of four: after ``plays`` seat 2,
    holding ``held`` and cards that fit nowhere, may play exactly ``legal``; each card of
    ``refused`` does not fit. The tables: plain, hearts 5..9, spades the 7, clubs and
    diamonds unopened; six and seven, a hearts high stack 7..9 and no low stack, a spades
    low stack 6..4 and no high stack, clubs and diamonds unopened."""
    match = dealt_norwegian(game, 4, {"rounds": ["fan_tan"]})
    deal_hands(match, hands)
    for seat, code in enumerate(plays.split()):
        assert match.to_act == seat % 4
        match.apply(seat % 4, parse_card(code))
    assert match.to_act == 2
    assert CardSet.parse(held) - CardSet(match.hands[2]) == CardSet()
    assert CardSet.of(match.legal_actions()) == CardSet.parse(legal)
    for code in refused:
        with pytest.raises(IllegalAction, match=f"{code} does not fit"):
            match.apply(2, parse_card(code))
