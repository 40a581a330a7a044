"""The schedule and its seeds: docs/rules.md §4.9's vectors, and the shape of the schedule."""

from __future__ import annotations

import pytest

from cardarena.competition import bot_seed, group_seed, lineups, mixed_seed, rotations, schedule

ZERO = bytes(32)


def test_group_seeds_match_the_rules_vectors() -> None:
    assert group_seed(ZERO, 0).hex() == (
        "0947f41c0355f086ec164df2438444adb3c604840ba9b9fc1c15b6c5a64409dd"
    )
    assert group_seed(ZERO, 1).hex() == (
        "9e505cf266cc31b687d28a043cd20937058bf088d5231f1ca2606741fadf0f04"
    )


def test_mixing_matches_the_rules_vector() -> None:
    mixed = mixed_seed(ZERO, [bytes(range(32)), None, b"\xff" * 32, None])
    assert mixed.hex() == "f820caae3c19c56432d510ef51f621cf43f4131811e25206356cefca6a26694b"


def test_without_contributions_the_mixed_seed_is_the_seed() -> None:
    seed = bytes(range(32))
    assert mixed_seed(seed, [None, None, None]) == seed
    assert mixed_seed(seed, []) == seed
    assert mixed_seed(seed, [None, ZERO]) != seed  # 32 zero bytes given is a contribution
    with pytest.raises(ValueError, match="contribution 1 has 3 bytes"):
        mixed_seed(seed, [None, b"abc"])


def test_the_schedule_plays_each_group_in_every_rotation_of_every_lineup() -> None:
    plans = schedule(ZERO, deals=2, entrants=4, players=3)
    assert len(plans) == 2 * 4 * 3  # deals x C(4, 3) lineups x rotations
    assert [p.index for p in plans] == list(range(len(plans)))
    assert [p.group for p in plans] == [g for g in range(8) for _ in range(3)]
    assert [p.deal for p in plans] == [d for d in range(2) for _ in range(12)]
    assert {tuple(sorted(p.seats)) for p in plans} == set(lineups(4, 3))
    for group in range(8):
        members = [p for p in plans if p.group == group]
        assert [p.rotation for p in members] == [0, 1, 2]
        assert {p.seed for p in members} == {group_seed(ZERO, group)}
        for seat in range(3):
            assert len({p.seats[seat] for p in members}) == 3  # everyone sits everywhere
    # One seed per group (rules §4.9), no longer one per deal shared by its lineups.
    assert len({p.seed for p in plans}) == 8
    assert list(schedule(ZERO, deals=2, entrants=4, players=3)) == list(plans)  # reproducible
    assert schedule(b"\x01" * 32, deals=2, entrants=4, players=3)[0].seed != plans[0].seed


def test_fewer_entrants_than_seats_repeat_in_order() -> None:
    plans = schedule(ZERO, deals=1, entrants=2, players=4)
    assert [p.seats for p in plans] == [(0, 1, 0, 1), (1, 0, 1, 0), (0, 1, 0, 1), (1, 0, 1, 0)]
    assert {p.group for p in plans} == {0}


def test_lineups_and_rotations() -> None:
    assert lineups(3, 3) == [(0, 1, 2)]
    assert lineups(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert rotations((0, 1, 2)) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    with pytest.raises(ValueError):
        lineups(0, 3)


def test_bot_seeds_are_as_before() -> None:
    # SHA-256(master || "/bot/3/1"), its first 8 bytes big-endian: unchanged by the move.
    assert bot_seed(ZERO, 3, 1) == 778287305462702984
    assert bot_seed(ZERO, 3, 1) != bot_seed(ZERO, 3, 2)
