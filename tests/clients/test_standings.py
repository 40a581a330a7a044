"""Standings and ratings of a tournament, on hand-made results with known numbers."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from cardarena.clients.tournament.faults import Faults
from cardarena.clients.tournament.outcomes import MatchResult
from cardarena.clients.tournament.pairings import MatchPlan
from cardarena.clients.tournament.ratings import ranks, rate
from cardarena.clients.tournament.standings import standings
from cardarena.clients.tournament.stats import mean_interval, t_cdf, t_quantile

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


def result(
    index: int,
    totals: tuple[int | Fraction, ...],
    winners: tuple[int, ...],
    *,
    error: str | None = None,
) -> MatchResult:
    group, rotation = divmod(index, 3)
    seats = ROTATIONS[rotation]
    plan = MatchPlan(index, group, group, rotation, bytes([group]) * 32, seats)
    return MatchResult(
        plan,
        tuple(NAMES[b] for b in seats),
        match_id=f"m{index}",
        totals=() if error else totals,
        winners=() if error else winners,
        faults=tuple(Faults() for _ in seats),
        error=error,
    )


# Lowest total wins. Seats in each rotation: (a b c), (b c a), (c a b).
RESULTS = [
    result(0, (1, 2, 3), (0,)),  # a wins
    result(1, (4, 5, 6), (0,)),  # b wins
    result(2, (7, 7, 9), (0, 1)),  # c and a share
    result(3, (0, 0, 0), (0, 1, 2)),  # all three share
    result(4, (2, 1, 3), (1,)),  # c wins
    result(5, (4, 2, 6), (1,)),  # a wins
]


def test_standings_take_one_sample_per_duplicate_group() -> None:
    rows = {r.bot: r for r in standings(RESULTS, NAMES, lowest_wins=True)}
    a = rows["a"]
    # a's group means: (1 + 6 + 7) / 3 = 14/3 and (0 + 3 + 2) / 3 = 5/3
    assert a.matches == 6 and a.groups == 2
    assert a.mean == pytest.approx(19 / 6)
    half = 12.706204736 * 1.5  # sd of the two means = 3 / sqrt 2; se = 1.5
    assert a.ci_low == pytest.approx(19 / 6 - half)
    assert a.ci_high == pytest.approx(19 / 6 + half)
    assert a.wins == pytest.approx(1 + 1 / 2 + 1 / 3 + 1)
    assert a.win_rate == pytest.approx((17 / 6) / 6)
    assert rows["b"].mean == pytest.approx(23 / 6)
    assert rows["c"].mean == pytest.approx(20 / 6)
    assert sum(r.wins for r in rows.values()) == pytest.approx(6)


def test_standings_sort_by_the_game_direction() -> None:
    assert [r.bot for r in standings(RESULTS, NAMES, lowest_wins=True)] == ["a", "c", "b"]
    assert [r.bot for r in standings(RESULTS, NAMES, lowest_wins=False)] == ["b", "c", "a"]


def test_a_failed_match_is_left_out_but_its_faults_count() -> None:
    failed = result(6, (), (), error="UNAVAILABLE: gone")
    failed.faults[0].crashes = 2
    rows = {r.bot: r for r in standings([*RESULTS, failed], NAMES, lowest_wins=True)}
    assert rows["a"].matches == 6
    assert rows["a"].faults.crashes == 2
    assert rows["a"].mean == pytest.approx(19 / 6)


def test_fractional_totals_are_averaged_exactly_enough() -> None:
    shared = [result(i, (Fraction(35, 2), Fraction(35, 2), 0), (0, 1)) for i in range(3)]
    rows = {r.bot: r for r in standings(shared, NAMES, lowest_wins=False)}
    assert rows["a"].mean == pytest.approx(35 / 3)


def test_ranks_share_ties_and_follow_the_direction() -> None:
    assert ranks([3, 1, 1], lowest_wins=True) == [3, 1, 1]
    assert ranks([3, 1, 1], lowest_wins=False) == [1, 2, 2]
    assert ranks([5, 5, 5], lowest_wins=True) == [1, 1, 1]


def test_ratings_reward_the_winner_and_ignore_completion_order() -> None:
    always_a = []
    for index in range(6):  # a takes the lowest total from whichever seat it holds
        seats = ROTATIONS[index % 3]
        totals = tuple(1 if NAMES[b] == "a" else 5 + seat for seat, b in enumerate(seats))
        always_a.append(result(index, totals, (seats.index(0),)))
    ratings = rate(always_a, NAMES, lowest_wins=True)
    assert ratings["a"].mu > ratings["b"].mu and ratings["a"].mu > ratings["c"].mu
    assert all(r.sigma < 25 / 3 for r in ratings.values())  # every bot learned something
    shuffled = always_a[:]
    random.Random(4).shuffle(shuffled)
    assert rate(shuffled, NAMES, lowest_wins=True) == ratings
    inverted = rate(always_a, NAMES, lowest_wins=False)
    assert inverted["a"].mu < inverted["b"].mu
