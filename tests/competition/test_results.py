"""What a match counts for: ranks, win shares and the forfeit rule, on hand-made matches."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cardarena.competition import Played, scored


def match(
    totals: tuple[int | Fraction, ...],
    winners: tuple[int, ...],
    forfeited: tuple[bool, ...] = (),
) -> Played:
    names = tuple("abcd"[: len(totals)])
    return Played(0, 0, names, totals, winners, forfeited=forfeited)


def summary(played: Played, *, lowest_wins: bool) -> list[tuple[float, int, float]]:
    return [(s.score, s.rank, s.win_share) for s in scored(played, lowest_wins=lowest_wins)]


def test_without_forfeits_scores_are_totals_and_ties_share_ranks() -> None:
    assert summary(match((3, 7, 7, 1), (1, 2)), lowest_wins=False) == [
        (3.0, 3, 0.0),
        (7.0, 1, 0.5),
        (7.0, 1, 0.5),
        (1.0, 4, 0.0),
    ]
    assert summary(match((3, 7, 7, 1), (3,)), lowest_wins=True) == [
        (3.0, 2, 0.0),
        (7.0, 3, 0.0),
        (7.0, 3, 0.0),
        (1.0, 1, 1.0),
    ]
    assert summary(match((Fraction(35, 2), Fraction(35, 2), 0), (0, 1)), lowest_wins=False)[0] == (
        17.5,
        1,
        0.5,
    )


def test_a_forfeit_scores_the_worst_total_in_a_highest_wins_game() -> None:
    # Seat 1 had the best total but forfeited: it scores the table's minimum (2), is last.
    rows = summary(match((5, 9, 2, 5), (1,), (False, True, False, False)), lowest_wins=False)
    assert rows == [(5.0, 1, 0.5), (2.0, 4, 0.0), (2.0, 3, 0.0), (5.0, 1, 0.5)]


def test_a_forfeit_scores_the_worst_total_in_a_lowest_wins_game() -> None:
    # The worst is the maximum there (12); seat 0's low total does not help it.
    rows = summary(match((1, 12, 4), (0,), (True, False, False)), lowest_wins=True)
    assert rows == [(12.0, 3, 0.0), (12.0, 2, 0.0), (4.0, 1, 1.0)]


def test_a_shared_win_loses_its_forfeiter() -> None:
    rows = summary(match((8, 8, 8, 1), (0, 1, 2), (False, True, False, False)), lowest_wins=False)
    assert [r[2] for r in rows] == [0.5, 0.0, 0.5, 0.0]
    assert [r[1] for r in rows] == [1, 4, 1, 3]


def test_when_every_winner_forfeited_the_best_of_the_rest_share_the_win() -> None:
    played = match((10, 6, 6, 3), (0,), (True, False, False, False))
    assert summary(played, lowest_wins=False) == [
        (3.0, 4, 0.0),
        (6.0, 1, 0.5),
        (6.0, 1, 0.5),
        (3.0, 3, 0.0),
    ]


def test_several_forfeiters_share_the_last_rank() -> None:
    rows = summary(match((4, 1, 7), (1,), (True, False, True)), lowest_wins=True)
    assert rows == [(7.0, 3, 0.0), (1.0, 1, 1.0), (7.0, 3, 0.0)]


def test_when_everyone_forfeited_nobody_wins() -> None:
    rows = scored(match((4, 1, 7), (1,), (True, True, True)), lowest_wins=True)
    assert [s.win_share for s in rows] == [0.0, 0.0, 0.0]
    assert [s.rank for s in rows] == [3, 3, 3]
    assert [s.score for s in rows] == [7.0, 7.0, 7.0]
    assert all(s.forfeited for s in rows)


def test_played_checks_its_lengths() -> None:
    with pytest.raises(ValueError, match="2 totals for 3 seats"):
        Played(0, 0, ("a", "b", "c"), (1, 2), (0,))
    with pytest.raises(ValueError, match="1 forfeited for 2 seats"):
        Played(0, 0, ("a", "b"), (1, 2), (0,), forfeited=(True,))
    with pytest.raises(ValueError, match="winners"):
        Played(0, 0, ("a", "b"), (1, 2), (2,))
