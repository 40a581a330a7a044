"""A ladder's board and its scheduling rule (competition.ladder): the board folded match by
match equals the tournament statistics over the same matches, and a simulation on a fake clock
shows the rule fair (every connected player's share of matches within one group of the
others') without ever seating a player in more matches than its capacity."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from cardarena.competition import Candidate, Played, next_lineup, rotations, standings
from cardarena.competition.ladder import Board, fold

PLAYERS = 3


def played(index: int, seats: tuple[str, ...], totals: tuple[int, ...]) -> Played:
    best = max(totals)
    winners = tuple(i for i, t in enumerate(totals) if t == best)
    return Played(
        index=index,
        group=index // PLAYERS,
        entrants=seats,
        totals=tuple(Fraction(t) for t in totals),
        winners=winners,
        faults=(0,) * PLAYERS,
        forfeited=(False,) * PLAYERS,
    )


def matches(groups: int, seed: int = 1) -> list[Played]:
    rng = random.Random(seed)
    names = ["a", "b", "c", "d"]
    out = []
    for group in range(groups):
        lineup = tuple(rng.sample(names, PLAYERS))
        for rotation, seats in enumerate(rotations(lineup)):
            totals = tuple(rng.randrange(0, 30) + (10 if n == "a" else 0) for n in seats)
            out.append(played(group * PLAYERS + rotation, seats, totals))
    return out


def test_the_board_folded_match_by_match_is_the_standings_of_the_same_matches() -> None:
    games = matches(30)
    board = fold(games, lowest_wins=False, group_size=PLAYERS)
    table = {s.entrant: s for s in standings(games, ["a", "b", "c", "d"], lowest_wins=False)}
    assert board.counted == len(games)
    for player, row in board.rows.items():
        expected = table[player]
        assert (row.matches, row.groups) == (expected.matches, expected.groups)
        assert row.wins == pytest.approx(expected.wins)
        assert row.mean == pytest.approx(expected.mean)
        low, high = row.interval or (None, None)
        assert low == pytest.approx(expected.ci_low) and high == pytest.approx(expected.ci_high)
        rating = board.rating(player)
        assert rating is not None and expected.rating is not None
        assert rating.mu == pytest.approx(expected.rating.mu)
    assert board.ranked()[0].player == "a"  # ten points a match better


def test_voided_matches_count_for_nothing_and_keep_the_prefix_moving() -> None:
    games: list[Played | None] = list(matches(4))
    games[4] = None
    board = fold(games, lowest_wins=False, group_size=PLAYERS)
    assert board.counted == 12
    assert sum(row.matches for row in board.rows.values()) == 11 * PLAYERS
    with pytest.raises(ValueError, match="folded where match 0 is due"):
        Board(lowest_wins=False, group_size=PLAYERS).add(games[1])


def test_new_pairings_come_before_repeats_and_the_fewest_scheduled_first() -> None:
    candidates = [Candidate(p, 0, 0.0) for p in "abcde"]
    first = next_lineup(candidates, {}, PLAYERS)
    assert first == ("a", "b", "c")
    met = Counter(frozenset(pair) for pair in (("a", "b"), ("a", "c"), ("b", "c")))
    again = [Candidate(p, 3 if p in "abc" else 0, 0.0) for p in "abcde"]
    assert next_lineup(again, met, PLAYERS) == ("d", "e", "a")
    assert next_lineup(candidates[:2], {}, PLAYERS) is None


@pytest.mark.parametrize(("seed", "mixed"), [(s, m) for s in range(4) for m in (False, True)])
def test_on_a_fake_clock_shares_stay_within_a_group_and_capacity_holds(
    seed: int, mixed: bool
) -> None:
    """Players come and go; each match lasts a random while; the director's rules (a
    player in no new group while it has a match waiting, a match started only when every
    player in it has room) run on every tick. Nobody ever holds more matches than its
    capacity. With equal capacities, every player connected all along ends within one
    group's matches of every other; with mixed ones, a player offering more room plays more
    (as on RBC's ranked ladder), and none is starved: per unit of capacity, every player's
    share is at least half of any other's."""
    rng = random.Random(seed)
    capacity = {p: rng.choice((1, 2, 3)) if mixed else 2 for p in "abcdefg"}
    always = set("abcd")
    connected = set(capacity)
    scheduled: Counter[str] = Counter()
    met: Counter[frozenset[str]] = Counter()
    waiting: list[tuple[str, ...]] = []
    running: list[tuple[int, tuple[str, ...]]] = []  # (ends at, seats)
    concurrency = 6
    for tick in range(3000):
        running = [(end, seats) for end, seats in running if end > tick]
        if tick % 97 == 0:  # someone comes or goes (never one of the four always here)
            who = rng.choice("efg")
            connected ^= {who}
            waiting = [m for m in waiting if set(m) <= connected]  # voided
        busy = Counter(p for _, seats in running for p in seats)
        for seats in list(waiting):
            if len(running) < concurrency and all(busy[p] < capacity[p] for p in seats):
                waiting.remove(seats)
                running.append((tick + rng.randrange(5, 40), seats))
                busy.update(seats)
        assert all(busy[p] <= capacity[p] for p in capacity), busy
        pending = {p for m in waiting for p in m}
        while len(running) + len(waiting) < concurrency:
            candidates = [
                Candidate(p, scheduled[p], 0.0)
                for p in sorted(connected)
                if p not in pending and busy[p] < capacity[p]
            ]
            lineup = next_lineup(candidates, met, PLAYERS)
            if lineup is None:
                break
            for p in lineup:
                scheduled[p] += PLAYERS
            for a in lineup:
                for b in lineup:
                    if a < b:
                        met[frozenset((a, b))] += 1
            waiting.extend(rotations(lineup))
            pending |= set(lineup)
    if mixed:
        per_unit = [scheduled[p] / capacity[p] for p in sorted(always)]
        assert min(per_unit) >= max(per_unit) / 2, (dict(scheduled), capacity)
    else:
        shares = [scheduled[p] for p in sorted(always)]
        assert max(shares) - min(shares) <= PLAYERS, dict(scheduled)
    assert min(scheduled[p] for p in always) > 100
