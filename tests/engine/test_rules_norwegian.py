"""RULES.md §1: the worked examples of the Norwegian family, and its rules one by one (Fan
Tan's, §1.4, in ``test_rules_fan_tan``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from cardarena.engine import OptionError, new_match, setup
from cardarena.engine.cards import CardSet, parse_card, parse_cards
from cardarena.engine.events import (
    MatchEnded,
    RoundScored,
    RoundStarted,
    TrickWon,
    TrumpDrawn,
)
from cardarena.engine.fairdeal import RandomStream
from cardarena.engine.fantan import FanTanRound
from cardarena.engine.norwegian import TRICK_SCORERS, resolve_rounds
from cardarena.engine.schedule import best_seats
from cardarena.engine.tricks import NO_TRUMP, TrickRound, playable_cards, winning_index

from ..helpers import fractions, play_out
from .norwegian_deals import H, S, cards, dealt_norwegian, play_twelve_and_one

# -- §1.2 tricks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trick", "trump", "winner"),
    [
        ("5D KD AC 9D", NO_TRUMP, 1),
        ("10H AH 2S 3H", S, 2),
        ("10H 2S 9S AC", S, 2),
        ("3S QS AH KS", S, 3),
    ],
)
def test_trick_winners(trick: str, trump: int, winner: int) -> None:
    assert winning_index(cards(trick), trump) == winner


def test_follow_suit_with_trumps() -> None:
    led_hearts = H
    assert CardSet(playable_cards(parse_cards("2S 4C"), led_hearts)) == CardSet.parse("2S 4C")
    assert CardSet(playable_cards(parse_cards("5H 2S"), led_hearts)) == CardSet.parse("5H")


def test_trick_round_wiring_leader_and_winner_leads() -> None:
    """Dealer 3: seat 0 leads; the trick's winner leads the next one; follow suit is enforced."""
    hands = [parse_cards("5D 2C"), parse_cards("KD 3C"), parse_cards("AC 4C"), parse_cards("9D 5C")]
    rnd = TrickRound(4, hands, 3, lambda r: r.tricks)
    assert rnd.to_act == 0
    out: list[Any] = []
    for seat, code in enumerate(["5D", "KD", "AC", "9D"]):
        assert rnd.to_act == seat
        assert rnd.legal_mask() >> parse_card(code) & 1
        rnd.play(parse_card(code), out)
    assert isinstance(out[-1], TrickWon) and out[-1].seat == 1
    assert rnd.to_act == 1 and rnd.tricks == [0, 1, 0, 0]


# -- §1.3 scoring ----------------------------------------------------------------------


def scored_round(kind: str, taken: list[str], tricks: list[int], **params: Any) -> list[int]:
    rnd = TrickRound(4, [0, 0, 0, 0], 0, lambda r: [])
    rnd.taken = [parse_cards(t) for t in taken]
    rnd.tricks = tricks
    defaults = {"all_taken_zero": False, "points_per_queen": 4, "queen_of_clubs": 8}
    return TRICK_SCORERS[kind](rnd, {**defaults, **params})


def fan_tan_scores(passes: list[int], left: list[int], went_out: int, **params: bool) -> list[int]:
    rnd = FanTanRound(
        4,
        tuple(1 << parse_card("7H") if s == 0 else 0 for s in range(4)),
        0,
        openers="six_and_seven",
        voluntary_pass=False,
        winner_scores_zero=params.get("winner_scores_zero", True),
    )
    rnd.passes = passes
    rnd.hands = [(1 << n) - 1 for n in left]
    rnd.went_out = went_out
    return [int(s) for s in rnd.scores()]


CLUB_CODES = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", "AC"]


def test_four_player_hexathlon_worked_example() -> None:
    rounds = [
        scored_round("pass", ["", "", "", ""], [3, 5, 1, 4]),
        scored_round(
            "clubs",
            [" ".join(CLUB_CODES[:5]), " ".join(CLUB_CODES[5:7]), " ".join(CLUB_CODES[7:13]), ""],
            [0, 0, 0, 0],
        ),
        scored_round("queens", ["QC QD", "QH", "", "QS"], [0, 0, 0, 0]),
        fan_tan_scores([3, 5, 0, 1], [4, 4, 0, 6], went_out=2),
        scored_round("grand", ["", "", "", ""], [4, 6, 1, 2]),
        scored_round("trumps", ["", "", "", ""], [6, 3, 2, 2]),
    ]
    assert rounds == [
        [3, 5, 1, 4],
        [5, 2, 6, 0],
        [8, 4, 0, 4],
        [7, 9, 0, 7],
        [-4, -6, -1, -2],
        [-6, -3, -2, -2],
    ]
    totals = tuple(Fraction(sum(column)) for column in zip(*rounds, strict=True))
    assert totals == fractions(13, 11, 4, 11)
    assert best_seats(totals, lowest_wins=True) == (2,)
    doubled = tuple(t + s for t, s in zip(totals, rounds[-1], strict=True))
    assert doubled == fractions(7, 8, 2, 9)


def test_seed_example_anna_and_bob() -> None:
    anna, bob = [3, 5, 8, 7, -4, -6], [5, 2, 4, 9, -6, -3]
    totals = (Fraction(sum(anna)), Fraction(sum(bob)))
    assert totals == fractions(13, 11)
    assert best_seats(totals, lowest_wins=True) == (1,)


def test_finale_scores_and_simpler_finale() -> None:
    taken = ["QC 2C 3C", "QD QH", "QS AC", ""]
    assert scored_round("finale", taken, [0] * 4) == [10, 8, 5, 0]
    assert scored_round("finale", taken, [0] * 4, queen_of_clubs=4) == [6, 8, 5, 0]


def test_clubs_all_taken_zero_and_queens_points() -> None:
    all_clubs = [" ".join(CLUB_CODES), "", "", ""]
    assert scored_round("clubs", all_clubs, [0] * 4) == [13, 0, 0, 0]
    assert scored_round("clubs", all_clubs, [0] * 4, all_taken_zero=True) == [0, 0, 0, 0]
    assert scored_round("queens", ["QC", "QD QH QS", "", ""], [0] * 4, points_per_queen=5) == [
        5,
        15,
        0,
        0,
    ]


def test_fan_tan_winner_scores_own_passes_option() -> None:
    assert fan_tan_scores([2, 1, 0, 0], [0, 3, 2, 1], 0) == [0, 4, 2, 1]
    assert fan_tan_scores([2, 1, 0, 0], [0, 3, 2, 1], 0, winner_scores_zero=False) == [2, 4, 2, 1]


# -- §1.5 presets and §1.6 options ---------------------------------------------------------


def test_preset_round_lists() -> None:
    kinds = {
        game: [r["type"] for r in resolve_rounds(new_match(game, seed=bytes(32)).options)]
        for game in ("pentathlon", "hexathlon", "heptathlon")
    }
    assert kinds == {
        "pentathlon": ["pass", "clubs", "queens", "fan_tan", "grand"],
        "hexathlon": ["pass", "clubs", "queens", "fan_tan", "grand", "trumps"],
        "heptathlon": ["pass", "clubs", "fan_tan", "queens", "grand", "trumps", "finale"],
    }


def test_preset_defaults_carry_into_custom_schedules() -> None:
    hepta = resolve_rounds(
        new_match("heptathlon", seed=bytes(32), options={"rounds": ["trumps", "fan_tan"]}).options
    )
    assert hepta[0]["trump"] == {"mode": "fixed", "suit": "S"}
    assert hepta[1]["openers"] == "seven"
    hexa = resolve_rounds(
        new_match("hexathlon", seed=bytes(32), options={"rounds": ["fan_tan"]}).options
    )
    assert hexa[0]["openers"] == "six_and_seven"
    penta = resolve_rounds(
        new_match("pentathlon", seed=bytes(32), options={"rounds": ["trumps"]}).options
    )
    assert penta[0]["trump"] == {"mode": "random"}


def test_round_object_overrides_type_options_for_that_round_only() -> None:
    options = {
        "rounds": [
            "trumps",
            {"type": "trumps", "trump": {"mode": "fixed", "suit": "H"}, "multiplier": 2},
        ],
        "trumps": {"trump": {"mode": "fixed", "suit": "D"}},
    }
    rounds = resolve_rounds(new_match("hexathlon", seed=bytes(32), options=options).options)
    assert [(r["trump"]["suit"], r["multiplier"]) for r in rounds] == [("D", 1), ("H", 2)]


def test_hexathlon_random_trump_is_drawn_from_its_label_before_the_deal() -> None:
    seed = bytes(range(32))
    match = new_match("hexathlon", players=4, seed=seed)
    log = play_out(match)
    drawn = [e for e in log if isinstance(e, TrumpDrawn)]
    assert [(e.round, e.suit) for e in drawn] == [(5, RandomStream(seed, "trump/5").uniform(4))]
    position = log.index(drawn[0])
    started = log[position - 1]
    assert isinstance(started, RoundStarted) and started.trump is None
    assert type(log[position + 1]).__name__ == "Dealt"


def test_double_last_round_multiplies_trick_scores() -> None:
    options = {"rounds": ["pass", {"type": "trumps", "multiplier": 2}]}
    log = play_out(new_match("hexathlon", players=4, seed=bytes(32), options=options))
    won = [0, 0, 0, 0]
    round_of_trick: list[int] = []
    current = -1
    for event in log:
        if isinstance(event, RoundStarted):
            current = event.round
        if isinstance(event, TrickWon) and current == 1:
            won[event.seat] += 1
            round_of_trick.append(current)
    last = [e for e in log if isinstance(e, RoundScored)][-1]
    assert last.scores == tuple(Fraction(-2 * w) for w in won)


def test_dealer_rotates_through_every_round_including_fan_tan() -> None:
    log = play_out(new_match("pentathlon", players=3, seed=bytes(32), options={"first_dealer": 2}))
    assert [e.dealer for e in log if isinstance(e, RoundStarted)] == [2, 0, 1, 2, 0]


def test_joint_winners_of_a_deliberate_tie() -> None:
    """Conventions, "Winning and ties". Two grand rounds: round 0 (dealer 0) seat 1 takes 12
    tricks and seat 2 one: -12, -1; round 1 (dealer 1) seat 2 takes 12 and seat 1 one. Totals
    0, -13, -13, 0: seats 1 and 2 share the lowest total and both win."""
    match = dealt_norwegian("pentathlon", 4, {"rounds": ["grand", "grand"]})
    play_twelve_and_one(match, last=2)
    assert match.round_scores == [(0, -12, -1, 0)]
    play_twelve_and_one(match, last=1)
    assert match.round_scores == [(0, -12, -1, 0), (0, -1, -12, 0)]
    assert match.over and match.totals == (0, -13, -13, 0)
    assert match.winners == (1, 2)
    assert match.log[-1] == MatchEnded((0, -13, -13, 0), (1, 2))


def test_finale_other_queens_stay_four_when_queens_are_worth_five() -> None:
    """§1.6: ``queens.points_per_queen: 5`` scores the queens round (round 0, dealer 0: seat 0
    takes QS QC QD = 15, seat 1 QH = 5) but not the finale, where the other queens stay 4
    (round 1, dealer 1: seat 1 takes 2D QS QC QD = 8 + 4 + 4 = 16, seat 2 QH and 12 clubs =
    4 + 12 = 16; with queens at 5 they would be 18 and 17)."""
    options = {"rounds": ["queens", "finale"], "queens": {"points_per_queen": 5}}
    match = dealt_norwegian("heptathlon", 4, options)
    play_twelve_and_one(match, last=0)
    play_twelve_and_one(match, last=1)
    assert match.round_scores == [(15, 5, 0, 0), (0, 16, 16, 0)]
    assert match.totals == (15, 21, 16, 0) and match.winners == (3,)


UNUSED_TYPE_OPTIONS: dict[str, Any] = {
    "queens": {"points_per_queen": 5, "multiplier": 3},
    "grand": {"multiplier": 4},
    "trumps": {"trump": {"mode": "fixed", "suit": "H"}, "multiplier": 2},
    "finale": {"queen_of_clubs": 0, "multiplier": 9},
    "fan_tan": {
        "openers": "six_and_seven",
        "multiplier": 7,
        "voluntary_pass": True,
        "winner_scores_zero": False,
    },
}


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"queens": {"points_per_queen": -1}}, "queens.points_per_queen"),
        ({"queens": {"points_per_queen": 2.5}}, "queens.points_per_queen"),
        ({"finale": {"queen_of_clubs": True}}, "finale.queen_of_clubs"),
        ({"finale": {"colour": "red"}}, "finale.colour"),
        ({"trumps": {"trump": {"mode": "fixed", "suit": "X"}}}, "trumps.trump.suit"),
        ({"fan_tan": {"openers": "eight"}}, "fan_tan.openers"),
        ({"grand": {"multiplier": 0}}, "grand.multiplier"),
    ],
)
def test_options_of_round_types_not_in_the_schedule_are_validated(
    options: dict[str, Any], path: str
) -> None:
    """§1.6: "Options for a type that the schedule does not use are still validated"."""
    with pytest.raises(OptionError) as caught:
        setup("pentathlon", players=4, options={"rounds": ["pass", "clubs"], **options})
    assert caught.value.path == path


def test_options_of_round_types_not_in_the_schedule_change_no_score() -> None:
    """§1.6: "... and have no effect". The same deals and play give the same scores with and
    without options for the five types that ``pass``, ``clubs`` leaves out. Round 0 (pass,
    dealer 0): seat 1 takes 12 tricks, seat 0 one: 1, 12, 0, 0. Round 1 (clubs, dealer 1): seat
    2 takes the 12 clubs that seat 1 throws away, seat 1 the last trick with QC: 0, 1, 12, 0."""
    logs = []
    for extra in ({}, UNUSED_TYPE_OPTIONS):
        match = dealt_norwegian("pentathlon", 4, {"rounds": ["pass", "clubs"], **extra})
        play_twelve_and_one(match, last=0)
        play_twelve_and_one(match, last=1)
        assert match.round_scores == [(1, 12, 0, 0), (0, 1, 12, 0)]
        assert match.totals == (1, 13, 12, 0) and match.winners == (3,)
        logs.append(match.log[1:])
    assert logs[0] == logs[1]


@pytest.mark.parametrize("rng_seed", range(3))
def test_options_of_unused_round_types_change_no_seeded_play(rng_seed: int) -> None:
    """The same for dealt cards: same seed, same random play, same events and totals."""
    logs, totals = [], []
    for extra in ({}, UNUSED_TYPE_OPTIONS):
        options = {"rounds": ["pass", "clubs", "pass"], **extra}
        match = new_match("pentathlon", players=4, seed=bytes([rng_seed]) * 32, options=options)
        logs.append(play_out(match, rng_seed=rng_seed)[1:])
        totals.append(match.totals)
    assert logs[0] == logs[1] and totals[0] == totals[1]
    assert sum(totals[0]) == 13 + 13 + 13  # pass, clubs, pass each hand out 13 points
