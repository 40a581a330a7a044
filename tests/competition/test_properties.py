"""Property tests: nothing a competition reports depends on the order its matches arrive in.

The server sees matches finish in any order, a client reads them in plan order; both must
rank them alike, to the last bit (exactly rounded sums, ratings in plan-index order).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.competition import Played, crosstable, schedule, standings

NAMES = ["a", "b", "c", "d"]


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[list[Played], bool]:
    """A random 3-player tournament of 4 entrants: totals, winners, faults and forfeits."""
    lowest_wins = draw(st.booleans())
    plans = schedule(bytes(32), deals=draw(st.integers(1, 2)), entrants=4, players=3)
    matches = []
    for plan in plans:
        totals = tuple(draw(st.lists(st.integers(-5, 30), min_size=3, max_size=3)))
        best = (min if lowest_wins else max)(totals)
        forfeited = tuple(draw(st.lists(st.booleans(), min_size=3, max_size=3)))
        matches.append(
            Played(
                plan.index,
                plan.group,
                tuple(NAMES[e] for e in plan.seats),
                totals,
                tuple(s for s, t in enumerate(totals) if t == best),
                faults=tuple(draw(st.lists(st.integers(0, 3), min_size=3, max_size=3))),
                forfeited=forfeited if draw(st.booleans()) else (),
            )
        )
    return matches, lowest_wins


@settings(max_examples=40, deadline=None)
@given(tournaments(), st.randoms(use_true_random=False))
def test_standings_and_crosstable_ignore_the_order_of_played(
    tournament: tuple[list[Played], bool], rng: random.Random
) -> None:
    matches, lowest_wins = tournament
    shuffled = matches[:]
    rng.shuffle(shuffled)
    assert standings(shuffled, NAMES, lowest_wins=lowest_wins) == standings(
        matches, NAMES, lowest_wins=lowest_wins
    )
    assert crosstable(shuffled, NAMES, lowest_wins=lowest_wins) == crosstable(
        matches, NAMES, lowest_wins=lowest_wins
    )
