"""No reader but the auditor learns how the engine numbers Triathlon's Jokers.

The engine tells the three Jokers apart (JK1..JK3) only so that a deal names each card once;
to the rules they are one card. A deal with the Jokers' numbers permuted among the hands is
the same deal to every player, so every seat and spectator must see exactly the same in
both, at every step: its view, its legal actions and its log. Shown the engine's numbers, a
seat that played JK2 told everyone it held no JK1, so whoever had not seen JK1 learned that
the third seat held it (a hidden-information review's find).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import replace

from hypothesis import HealthCheck, settings

from cardarena.engine import SPECTATOR, Match, Projector, legal_actions_for, project_log, view
from cardarena.engine.cards import JOKERS, CardSet
from cardarena.engine.events import CardPlayed, Dealt, Event, RoundStarted
from cardarena.engine.jokers import joker_names, renamed_mask
from cardarena.engine.views import Viewer

from .properties_support import MAX_STEPS, Config, choose, over_random_matches

TRIATHLONS = [
    Config("triathlon", 3),
    Config("triathlon", 3, {"end": "triathlon_in_one_deal", "first_dealer": "random"}),
    Config("triathlon", 3, {"max_deals": 3}),
]
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PERMUTATIONS = [dict(zip(JOKERS, p, strict=True)) for p in itertools.permutations(JOKERS)][1:]
"""Every way to number the Jokers otherwise."""


def renumbered(real: Match, rng: random.Random) -> Match:
    """A copy of ``real``, just dealt, with the deal's Jokers numbered otherwise: in its hands
    and in its log's Dealt."""
    names = rng.choice(PERMUTATIONS)
    twin = real.with_hidden_hands(None, tuple(renamed_mask(h, names) for h in real.hands))
    at = max(i for i, e in enumerate(twin.log) if isinstance(e, Dealt))
    dealt = twin.log[at]
    assert isinstance(dealt, Dealt) and twin.log is not real.log
    hands = tuple(CardSet(renamed_mask(h.mask, names)) if h else None for h in dealt.hands)
    twin.log[at] = replace(dealt, hands=hands)
    return twin


def deals_twice(
    config: Config, seed: bytes, rng_seed: int
) -> Iterator[tuple[Match, Match, list[Event], list[Event]]]:
    """Play a random match and, beside it, the same match with each deal's Jokers numbered
    otherwise (the same actions: a Joker's id plays "a Joker"); yield both before each
    action, with the entries each logged since the last step."""
    rng = random.Random(rng_seed)
    real = config.new(seed)
    twin = renumbered(real, rng)
    seen = 0
    twin_new = twin.log[:]
    jokers_played = 0
    for _ in range(MAX_STEPS):
        if real.over:
            break
        yield real, twin, real.log[seen:], twin_new
        seen = len(real.log)
        seat = real.to_act
        assert seat is not None and seat == twin.to_act
        action = choose(rng, legal_actions_for(real, seat))  # a Joker under the seat's number
        jokers_played += action in JOKERS
        real.apply(seat, action)
        twin.apply(seat, action)
        twin_new = twin.log[seen:]
        if any(isinstance(e, Dealt) for e in real.log[seen:]):  # the next deal, renumbered
            start = max(i for i, e in enumerate(real.log) if isinstance(e, RoundStarted))
            before, twin = twin, renumbered(real, rng)
            twin_new = before.log[seen:start] + twin.log[start:]
    assert real.over and real.totals == twin.totals
    assert jokers_played, "no Joker was played: the test checked nothing"


@over_random_matches(TRIATHLONS, SETTINGS)
def test_renumbering_the_dealt_jokers_changes_nothing_a_reader_sees(
    config: Config, seed: bytes, rng_seed: int
) -> None:
    readers: list[Viewer] = [*range(config.players), SPECTATOR]
    shown = {r: (Projector(r), Projector(r)) for r in readers}
    for real, twin, new, twin_new in deals_twice(config, seed, rng_seed):
        for reader, (mine, its) in shown.items():
            assert view(real, reader) == view(twin, reader), f"{reader!r}'s view differs"
            assert [mine.project(e) for e in new] == [its.project(e) for e in twin_new]
        seat = real.to_act
        assert seat is not None
        assert legal_actions_for(real, seat) == legal_actions_for(twin, seat)


def test_a_seat_numbers_its_own_jokers_first_then_each_as_it_is_played() -> None:
    """docs/rules.md's rule, by hand: seat holding JK3 sees it as JK1; the first Joker it
    sees another play is JK2; a spectator numbers them in the order they are played."""
    jk1, jk2, jk3 = JOKERS
    assert joker_names(1 << jk3, []) == {jk3: jk1}
    assert joker_names(1 << jk3, [jk2]) == {jk3: jk1, jk2: jk2}
    assert joker_names(1 << jk3, [jk1, jk3]) == {jk3: jk1, jk1: jk2}
    assert joker_names((1 << jk1) | (1 << jk3), [jk2, jk1]) == {jk1: jk1, jk3: jk2, jk2: jk3}
    assert joker_names(0, [jk3, jk1, jk2]) == {jk3: jk1, jk1: jk2, jk2: jk3}


def test_a_played_joker_keeps_its_number_in_the_trick_and_the_seat_plays_its_lowest() -> None:
    """A seat's Jokers: the number it is offered is the one its play then shows, in the
    CardPlayed and in the trick, to the seat itself."""
    rng = random.Random(5)
    for attempt in range(200):
        match = Config("triathlon", 3).new(bytes([attempt]) * 32)
        projected_before = 0
        for _ in range(MAX_STEPS):
            if match.over:
                break
            seat = match.to_act
            assert seat is not None
            offered = legal_actions_for(match, seat)
            jokers = [a for a in offered if a in JOKERS]
            action = jokers[0] if jokers else rng.choice(offered)
            match.apply(seat, action)
            if jokers:
                mine = project_log(match.log, seat)
                plays = [e for e in mine[projected_before:] if isinstance(e, CardPlayed)]
                assert plays[0] == CardPlayed(seat, jokers[0])
                return
            projected_before = len(match.log)
    raise AssertionError("no seat was ever offered a Joker")
