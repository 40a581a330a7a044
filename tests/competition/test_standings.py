"""Standings, ratings and t-intervals, on hand-made matches with known numbers.

Moved with the code from tests/clients/test_standings.py: the same matches and numbers, now
as :class:`Played`.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from cardarena.competition import Played, rate, scored, standings
from cardarena.competition.stats import mean_interval, t_cdf, t_quantile

# Student t quantiles from published tables (R: qt(p, df)).
T_TABLE = [
    (0.975, 1, 12.706204736),
    (0.975, 2, 4.302652730),
    (0.975, 4, 2.776445105),
    (0.975, 10, 2.228138852),
    (0.975, 30, 2.042272456),
    (0.95, 5, 2.015048373),
    (0.995, 3, 5.840909310),
    (0.5, 7, 0.0),
]


@pytest.mark.parametrize(("p", "df", "expected"), T_TABLE)
def test_t_quantiles_match_the_tables(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-8)


def test_t_cdf_is_symmetric_and_near_the_normal_for_many_degrees() -> None:
    assert t_cdf(0.0, 3) == pytest.approx(0.5)
    assert t_cdf(-2.0, 5) == pytest.approx(1 - t_cdf(2.0, 5))
    assert t_quantile(0.975, 100_000) == pytest.approx(1.959964, abs=1e-4)


def test_mean_interval_of_one_to_five() -> None:
    mean, half = mean_interval([1, 2, 3, 4, 5])
    # s = sqrt(2.5), se = s / sqrt(5) = sqrt(0.5); half = t(0.975, 4) * se
    assert mean == 3
    assert half == pytest.approx(2.776445105 * 0.5**0.5)
    assert half == pytest.approx(1.963243, abs=1e-6)


def test_mean_interval_needs_two_samples() -> None:
    assert mean_interval([]) == (None, None)
    assert mean_interval([4.0]) == (4.0, None)
    assert mean_interval([2.0, 2.0]) == (2.0, 0.0)


ROTATIONS = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
NAMES = ["a", "b", "c"]


def played(
    index: int,
    totals: tuple[int | Fraction, ...],
    winners: tuple[int, ...],
    *,
    faults: tuple[int, ...] = (),
    forfeited: tuple[bool, ...] = (),
) -> Played:
    group, rotation = divmod(index, 3)
    seats = ROTATIONS[rotation]
    entrants = tuple(NAMES[e] for e in seats)
    return Played(index, group, entrants, totals, winners, faults, forfeited)


# Lowest total wins. Seats in each rotation: (a b c), (b c a), (c a b).
PLAYED = [
    played(0, (1, 2, 3), (0,)),  # a wins
    played(1, (4, 5, 6), (0,)),  # b wins
    played(2, (7, 7, 9), (0, 1)),  # c and a share
    played(3, (0, 0, 0), (0, 1, 2)),  # all three share
    played(4, (2, 1, 3), (1,)),  # c wins
    played(5, (4, 2, 6), (1,)),  # a wins
]


def test_standings_take_one_sample_per_duplicate_group() -> None:
    rows = {r.entrant: r for r in standings(PLAYED, NAMES, lowest_wins=True)}
    a = rows["a"]
    # a's group means: (1 + 6 + 7) / 3 = 14/3 and (0 + 3 + 2) / 3 = 5/3
    assert a.matches == 6 and a.groups == 2
    assert a.mean == pytest.approx(19 / 6)
    half = 12.706204736 * 1.5  # sd of the two means = 3 / sqrt 2; se = 1.5
    assert a.ci_low == pytest.approx(19 / 6 - half)
    assert a.ci_high == pytest.approx(19 / 6 + half)
    assert a.wins == pytest.approx(1 + 1 / 2 + 1 / 3 + 1)
    assert a.win_rate == pytest.approx((17 / 6) / 6)
    assert (a.faults, a.forfeits) == (0, 0)
    assert rows["b"].mean == pytest.approx(23 / 6)
    assert rows["c"].mean == pytest.approx(20 / 6)
    assert sum(r.wins for r in rows.values()) == pytest.approx(6)
    assert a.rating is not None


def test_standings_sort_by_the_game_direction() -> None:
    assert [r.entrant for r in standings(PLAYED, NAMES, lowest_wins=True)] == ["a", "c", "b"]
    assert [r.entrant for r in standings(PLAYED, NAMES, lowest_wins=False)] == ["b", "c", "a"]


def test_an_entrant_without_matches_is_last_with_no_numbers() -> None:
    rows = standings(PLAYED, [*NAMES, "d"], lowest_wins=True)
    d = rows[-1]
    assert (d.entrant, d.matches, d.groups, d.mean, d.ci_low, d.win_rate) == (
        "d",
        0,
        0,
        None,
        None,
        None,
    )


def test_standings_count_faults_and_forfeits() -> None:
    # a (seat 0 of match 0) forfeits: it scores 3, the worst total at the table, and its win
    # goes to the best of the rest, b's 2.
    forfeit = played(0, (1, 2, 3), (0,), faults=(4, 0, 1), forfeited=(True, False, False))
    rows = {r.entrant: r for r in standings([forfeit, *PLAYED[1:]], NAMES, lowest_wins=True)}
    assert (rows["a"].faults, rows["a"].forfeits) == (4, 1)
    assert (rows["c"].faults, rows["c"].forfeits) == (1, 0)
    assert rows["a"].wins == pytest.approx(1 / 2 + 1 / 3 + 1)
    assert rows["b"].wins == pytest.approx(1 + 1 + 1 / 3)
    assert rows["a"].mean == pytest.approx(((3 + 6 + 7) / 3 + 5 / 3) / 2)


def test_unknown_entrants_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown entrants c"):
        standings(PLAYED, ["a", "b"], lowest_wins=True)


def test_fractional_totals_are_averaged_exactly_enough() -> None:
    shared = [played(i, (Fraction(35, 2), Fraction(35, 2), 0), (0, 1)) for i in range(3)]
    rows = {r.entrant: r for r in standings(shared, NAMES, lowest_wins=False)}
    assert rows["a"].mean == pytest.approx(35 / 3)


def test_ranks_share_ties_and_follow_the_direction() -> None:
    def ranks(totals: tuple[int, ...], lowest_wins: bool) -> list[int]:
        match = Played(0, 0, ("x", "y", "z"), totals, (0,))
        return [s.rank for s in scored(match, lowest_wins=lowest_wins)]

    assert ranks((3, 1, 1), True) == [3, 1, 1]
    assert ranks((3, 1, 1), False) == [1, 2, 2]
    assert ranks((5, 5, 5), True) == [1, 1, 1]


def always_a() -> list[Played]:
    matches = []
    for index in range(6):  # a takes the lowest total from whichever seat it holds
        seats = ROTATIONS[index % 3]
        totals = tuple(1 if NAMES[e] == "a" else 5 + seat for seat, e in enumerate(seats))
        matches.append(played(index, totals, (seats.index(0),)))
    return matches


def test_ratings_reward_the_winner_and_ignore_completion_order() -> None:
    matches = always_a()
    ratings = rate(matches, NAMES, lowest_wins=True)
    assert ratings["a"].mu > ratings["b"].mu and ratings["a"].mu > ratings["c"].mu
    assert all(r.sigma < 25 / 3 for r in ratings.values())  # every entrant learned something
    shuffled = matches[:]
    random.Random(4).shuffle(shuffled)
    assert rate(shuffled, NAMES, lowest_wins=True) == ratings
    inverted = rate(matches, NAMES, lowest_wins=False)
    assert inverted["a"].mu < inverted["b"].mu


def test_a_forfeit_is_rated_last() -> None:
    # a wins every match on the table but forfeits them all: rated below both rivals.
    forfeits = [
        Played(
            m.index,
            m.group,
            m.entrants,
            m.totals,
            m.winners,
            forfeited=tuple(e == "a" for e in m.entrants),
        )
        for m in always_a()
    ]
    ratings = rate(forfeits, NAMES, lowest_wins=True)
    assert ratings["a"].mu < ratings["b"].mu and ratings["a"].mu < ratings["c"].mu


def test_a_forfeiter_never_ranks_above_a_player_it_ties() -> None:
    """The forfeiter's score is the worst at its table, which is its rival's when that rival
    finished last: equal means, and the player who finished ranks first."""
    played = [
        Played(
            index=i,
            group=i,
            entrants=("b-forfeits", "z-plays", "m"),
            totals=(90, 10, 50),
            winners=(0,),
            forfeited=(True, False, False),
        )
        for i in range(2)
    ]
    rows = standings(played, ["b-forfeits", "z-plays", "m"], lowest_wins=False)
    names = [r.entrant for r in rows]
    assert rows[1].mean == rows[2].mean == 10
    assert names == ["m", "z-plays", "b-forfeits"]
