"""The crosstable, computed by hand: 3 entrants, a 2-player game, 3 deals (9 groups).

Each duplicate group seats one pair in both rotations. In a group of ``x`` and ``y`` with a
planned difference ``D``, rotation 0 is ``x, y`` with totals ``(11 + D, 10)`` and rotation 1 is
``y, x`` with ``(10, 9 + D)``: ``x``'s group mean is ``10 + D``, ``y``'s is 10, and their
paired difference is ``D``. The differences, by pair:

    a - b (groups 0, 3, 6):  2, -1, 5   mean 2, s^2 = (0 + 9 + 9) / 2 = 9,   se = sqrt(3)
    a - c (groups 1, 4, 7):  4, -2, 7   mean 3, s^2 = (1 + 25 + 16) / 2 = 21, se = sqrt(7)
    b - c (groups 2, 5, 8):  2, -1, 2   mean 1, s^2 = (1 + 4 + 1) / 2 = 3,  se = 1

and each 95% interval is mean ± t(0.975, 2) * se.
"""

from __future__ import annotations

import math

import pytest

from cardarena.competition import (
    Pairing,
    Played,
    crosstable,
    paired_differences,
    schedule,
    standings,
)

T_975_2 = 4.302652729911275  # t(0.975, 2): R's qt(0.975, 2)
NAMES = ["a", "b", "c"]
DIFFERENCES = {(0, 1): [2, -1, 5], (0, 2): [4, -2, 7], (1, 2): [2, -1, 2]}


def tournament(*, lowest_wins: bool) -> list[Played]:
    matches = []
    for plan in schedule(bytes(32), deals=3, entrants=3, players=2):
        x, y = plan.seats if plan.rotation == 0 else plan.seats[::-1]
        d = DIFFERENCES[(x, y)][plan.deal]
        totals = (11 + d, 10) if plan.rotation == 0 else (10, 9 + d)
        best = (min if lowest_wins else max)(totals)
        winners = tuple(s for s, t in enumerate(totals) if t == best)
        entrants = tuple(NAMES[e] for e in plan.seats)
        matches.append(Played(plan.index, plan.group, entrants, totals, winners))
    return matches


def pairing(a: str, b: str, mean: float, se: float) -> Pairing:
    return Pairing(a, b, 3, mean, mean - T_975_2 * se, mean + T_975_2 * se)


EXPECTED = [
    pairing("a", "b", 2, math.sqrt(3)),
    pairing("a", "c", 3, math.sqrt(7)),
    pairing("b", "c", 1, 1),
]


def test_paired_differences_take_one_sample_per_shared_group_in_group_order() -> None:
    played = tournament(lowest_wins=False)
    assert paired_differences(played, "a", "b", lowest_wins=False) == [2, -1, 5]
    assert paired_differences(played, "b", "a", lowest_wins=False) == [-2, 1, -5]
    assert paired_differences(played, "c", "b", lowest_wins=False) == [-2, 1, -2]
    with pytest.raises(ValueError, match="two entrants"):
        paired_differences(played, "a", "a", lowest_wins=False)


def test_the_crosstable_by_hand() -> None:
    rows = crosstable(tournament(lowest_wins=False), NAMES, lowest_wins=False)
    assert [(r.a, r.b, r.groups) for r in rows] == [("a", "b", 3), ("a", "c", 3), ("b", "c", 3)]
    for row, expected in zip(rows, EXPECTED, strict=True):
        assert row.mean == pytest.approx(expected.mean)
        assert row.ci_low == pytest.approx(expected.ci_low)
        assert row.ci_high == pytest.approx(expected.ci_high)
    assert rows[2].ci_low == pytest.approx(1 - 4.302652729911275)


def test_when_the_lowest_total_wins_positive_still_means_a_did_better() -> None:
    # The same totals, read the other way round: every difference changes sign.
    played = tournament(lowest_wins=True)
    assert paired_differences(played, "a", "b", lowest_wins=True) == [-2, 1, -5]
    rows = crosstable(played, NAMES, lowest_wins=True)
    for row, expected in zip(rows, EXPECTED, strict=True):
        assert expected.mean is not None and expected.ci_low is not None
        assert expected.ci_high is not None
        assert row.mean == pytest.approx(-expected.mean)
        assert row.ci_low == pytest.approx(-expected.ci_high)
        assert row.ci_high == pytest.approx(-expected.ci_low)


def test_the_standings_of_the_same_tournament() -> None:
    # a's group means: 12, 9, 15 against b and 14, 8, 17 against c; six groups.
    rows = {
        r.entrant: r for r in standings(tournament(lowest_wins=False), NAMES, lowest_wins=False)
    }
    assert rows["a"].groups == 6
    assert rows["a"].mean == pytest.approx(75 / 6)


def test_pairs_that_never_met_have_no_samples() -> None:
    played = [m for m in tournament(lowest_wins=False) if set(m.entrants) != {"b", "c"}]
    rows = crosstable(played, NAMES, lowest_wins=False)
    assert rows[2] == Pairing("b", "c", 0, None, None, None)
    one = crosstable(played[:2], NAMES, lowest_wins=False)[0]  # group 0 alone
    assert (one.groups, one.mean, one.ci_low) == (1, 2.0, None)
