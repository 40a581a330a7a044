"""The pairing designs: test vectors (docs/tournaments.md, "Pairings"), the properties each
design promises, and a plan that grows linearly with the entrants for the balanced sample."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from cardarena.competition import BALANCED, EVERY_LINEUP, GAUNTLET, Design, schedule
from cardarena.competition.pairings import combination, shuffled

ZERO = bytes(32)


def test_the_documented_vectors() -> None:
    """docs/tournaments.md states these for the zero mixed seed, 6 entrants, 3 seats."""
    assert shuffled(ZERO, "balanced/0", range(6)) == [2, 4, 5, 3, 0, 1]
    assert shuffled(ZERO, "gauntlet/0", range(2, 6)) == [4, 3, 2, 5]
    assert shuffled(ZERO, "balanced/1", range(6)) == [0, 5, 3, 2, 4, 1]
    balanced = schedule(ZERO, deals=2, entrants=6, players=3, design=Design(BALANCED))
    circles = [[p.seats[0] for p in balanced if p.rotation == 0 and p.deal == d] for d in (0, 1)]
    assert circles == [[2, 4, 5, 3, 0, 1], [0, 4, 5, 1, 3, 2]]
    assert [p.seats for p in balanced if p.rotation == 0][:2] == [(2, 4, 5), (4, 5, 3)]
    gauntlet = schedule(ZERO, deals=1, entrants=6, players=3, design=Design(GAUNTLET, 2))
    assert [(p.group, p.seats) for p in gauntlet if p.rotation == 0] == [
        (0, (0, 4, 3)),
        (0, (1, 4, 3)),
        (1, (0, 2, 5)),
        (1, (1, 2, 5)),
    ]


@pytest.mark.parametrize(("n", "k"), [(n, k) for n in range(1, 10) for k in range(1, n + 1)])
def test_a_combination_is_found_by_its_rank_alone(n: int, k: int) -> None:
    ranked = [combination(n, k, r) for r in range(math.comb(n, k))]
    assert ranked == list(itertools.combinations(range(n), k))


def test_every_lineup_is_the_default_and_its_order_is_unchanged() -> None:
    plans = schedule(ZERO, deals=2, entrants=5, players=3)
    assert plans.design.kind == EVERY_LINEUP
    lineups = [p.seats for p in plans if p.rotation == 0]
    assert lineups == list(itertools.combinations(range(5), 3)) * 2
    assert [p.index for p in plans] == list(range(len(plans)))


@pytest.mark.parametrize("entrants", [8, 16, 32])
@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_balanced_sample_grows_linearly_and_is_balanced(entrants: int, players: int) -> None:
    deals = 40
    plans = schedule(ZERO, deals=deals, entrants=entrants, players=players, design=Design(BALANCED))
    assert len(plans) == deals * entrants * players  # linear in the entrants
    groups = Counter[int]()
    seats = Counter[tuple[int, int]]()
    pairs = Counter[frozenset[int]]()
    for group in range(plans.groups):
        members = [plans[i] for i in plans.members(group)]
        lineup = set(members[0].seats)
        assert len(lineup) == players  # nobody twice at one table
        assert all(set(p.seats) == lineup and p.seed == members[0].seed for p in members)
        groups.update(lineup)
        pairs.update(frozenset(pair) for pair in itertools.combinations(sorted(lineup), 2))
        for plan in members:
            seats.update((entrant, seat) for seat, entrant in enumerate(plan.seats))
    assert set(groups.values()) == {deals * players}  # every entrant the same groups
    assert set(seats.values()) == {deals * players}  # and every seat equally
    # Every pair meets, about as often as any other: independent shuffles left pairs of 32
    # entrants at 3 seats meeting 0 to 19 times over 40 rounds (7.7 on average).
    assert len(pairs) == entrants * (entrants - 1) // 2
    mean = deals * entrants * math.comb(players, 2) / len(pairs)
    assert mean * 0.6 <= min(pairs.values()) <= max(pairs.values()) <= mean * 1.4


def test_a_gauntlet_plays_every_candidate_against_the_same_field_lineups() -> None:
    design = Design(GAUNTLET, candidates=3)
    plans = schedule(ZERO, deals=5, entrants=10, players=4, design=design)
    field = set(range(3, 10))
    per_deal = math.ceil(7 / 3)
    assert len(plans) == 5 * per_deal * 3 * 4
    for group in range(plans.groups):
        members = [plans[i] for i in plans.members(group)]
        assert len({p.seed for p in members}) == 1
        rivals = {frozenset(p.seats) - {c} for c in range(3) for p in members if c in p.seats}
        assert len(rivals) == 1  # every candidate meets the same rivals, on the same cards
        (lineup,) = rivals
        assert lineup <= field and len(lineup) == 3
        for candidate in range(3):
            mine = [p for p in members if candidate in p.seats]
            assert sorted(p.seats.index(candidate) for p in mine) == [0, 1, 2, 3]
    for deal in range(5):  # each deal, every field member is met
        met = {e for p in plans if p.deal == deal for e in p.seats} - {0, 1, 2}
        assert met == field


@pytest.mark.parametrize(
    ("design", "entrants", "players", "words"),
    [
        (Design("swiss"), 6, 3, "pairing must be one of"),
        (Design(GAUNTLET, 0), 6, 3, "needs 1..4 candidates"),
        (Design(GAUNTLET, 5), 6, 3, "a field of at least 2"),
        (Design(BALANCED, 2), 6, 3, "candidates are a gauntlet's"),
    ],
)
def test_a_design_that_cannot_be_played_is_refused_by_name(
    design: Design, entrants: int, players: int, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        schedule(ZERO, deals=1, entrants=entrants, players=players, design=design)


def test_a_plan_is_made_on_demand() -> None:
    """A 100,000-match plan costs nothing until a match is asked for."""
    plans = schedule(ZERO, deals=10_000, entrants=20, players=4, design=Design(BALANCED))
    assert len(plans) == 800_000
    last = plans[-1]
    assert last.index == len(plans) - 1 and last.deal == 9_999
    assert plans[len(plans) - 1 : len(plans)] == [last]
