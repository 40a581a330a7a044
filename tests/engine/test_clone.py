"""``Match.clone()``: an independent copy, attribute by attribute (see engine/copies.py).

A clone is written out by hand, class by class (the match, each round core, each schedule),
so these tests hold it to what it must be: every attribute of the original set on the clone
and equal to it, no list, set or dict shared between the two (a schedule may be shared only
if play never changes it), and nothing played on either changing the other: hands, the
trick, the table, the scores, the feats, the log. A state added later and left out of a
``copy`` fails the first test. (test_determinize.py plays clones against deep copies, and
test_compiled_engine.py clones on the compiled build.)
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from cardarena.engine import Match, new_match, setup

from ..helpers import play_out

GAMES = [
    ("pentathlon", 4),
    ("hexathlon", 3),
    ("hexathlon", 5),
    ("heptathlon", 4),
    ("crazy_sixes", 3),
    ("crazy_sixes", 4),
    ("triathlon", 3),
]
STEPS = (0, 1, 2, 7, 40, 100, 180, 260, 10**6)
"""Where each match is cloned: the start, mid-trick, mid-round, later rounds (the Fan Tans
among them), and over."""
CONTAINERS = (list, set, dict)
SHARED = {"options"}
"""The match's normalised options are shared by every match of a setup, read-only."""


def attributes(obj: object) -> dict[str, Any]:
    """Every attribute ``obj`` has set: its ``__dict__`` and the slots of its class and bases."""
    names = set(getattr(obj, "__dict__", ()))
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    names -= {"__dict__", "__weakref__"}
    return {name: getattr(obj, name) for name in sorted(names) if hasattr(obj, name)}


def frozen(value: Any) -> Any:
    """``value`` with its lists, sets and dicts (at any depth) made immutable, for comparing a
    state before and after: equal when the contents are, whatever is shared."""
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    if isinstance(value, dict):
        return tuple(sorted((k, frozen(v)) for k, v in value.items()))
    return value


def parts(match: Match) -> dict[str, object]:
    """The objects a clone copies: the match, its round (``None`` between deals) and schedule."""
    return {"match": match, "round": match.round, "schedule": match.schedule}


def state(match: Match) -> dict[str, Any]:
    """Everything the match, its round and its schedule hold, frozen (the round and the
    schedule each on their own, not as attributes of the match)."""
    own = {k: v for k, v in attributes(match).items() if k not in ("round", "schedule")}
    return {
        "match": frozen(own),
        "round": None if match.round is None else frozen(attributes(match.round)),
        "schedule": frozen(attributes(match.schedule)),
    }


def play_on(match: Match, rng_seed: int) -> None:
    """Play to the end, dealing from a seed first when the match waits for one."""
    if not match.dealing:
        match.deal_from(bytes([rng_seed]) * 32)
    play_out(match, rng_seed)


def positions(game: str, players: int) -> Iterator[Match]:
    """Fresh matches of ``game``, one at each of :data:`STEPS` and one waiting for its deal."""
    for steps in STEPS:
        match = new_match(game, players=players, seed=bytes([players, len(game)]) * 16)
        rng = random.Random(steps)
        for _ in range(steps):
            seat = match.to_act
            if seat is None:
                break
            match.apply(seat, rng.choice(match.legal_actions()))
        yield match
    yield setup(game, players=players).start(bytes(32), dealing=False)


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_clone_sets_every_attribute_and_shares_no_container(game: str, players: int) -> None:
    for match in positions(game, players):
        clone = match.clone()
        assert state(clone) == state(match)
        for name, original in parts(match).items():
            copy = parts(clone)[name]
            if original is None:
                assert copy is None
                continue
            assert type(copy) is type(original)
            if copy is original:
                assert name == "schedule", f"the clone shares its {name}"
                continue
            mine, theirs = attributes(original), attributes(copy)
            assert theirs.keys() == mine.keys(), f"the {name}'s copy misses an attribute"
            for attr, value in mine.items():
                if attr in SHARED or not isinstance(value, CONTAINERS):
                    continue
                assert theirs[attr] is not value, f"{name}.{attr} is shared"
                if isinstance(value, list):
                    inner = [v for v in value if isinstance(v, CONTAINERS)]
                    shared = [a for a, b in zip(inner, theirs[attr], strict=False) if a is b]
                    assert not shared, f"{name}.{attr} shares its items"


def test_a_schedule_a_clone_shares_is_one_play_never_changes() -> None:
    shared = 0
    for game, players in GAMES:
        match = new_match(game, players=players, seed=bytes(32))
        if match.clone().schedule is match.schedule:
            shared += 1
            before = frozen(attributes(match.schedule))
            play_out(match)
            assert frozen(attributes(match.schedule)) == before, f"{game} changes its schedule"
    assert shared, "no schedule is shared: this test checks nothing"


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_playing_a_clone_leaves_its_original_as_it_was(game: str, players: int) -> None:
    for number, match in enumerate(positions(game, players)):
        before = state(match)
        clone = match.clone()
        play_on(clone, number)
        assert clone.over
        assert state(match) == before, "playing the clone changed the original"


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_playing_the_original_leaves_its_clone_as_it_was(game: str, players: int) -> None:
    for number, match in enumerate(positions(game, players)):
        clone = match.clone()
        before = state(clone)
        play_on(match, number)
        assert state(clone) == before, "playing the original changed the clone"
        play_on(clone, number + 1)
        assert clone.over


def test_a_clone_plays_on_as_its_original_would() -> None:
    """The same actions from the same position give the same events, totals and winners."""
    for game, players in GAMES:
        for match in positions(game, players):
            clone = match.clone()
            play_on(match, 5)
            play_on(clone, 5)
            assert clone.log == match.log
            assert (clone.totals, clone.winners) == (match.totals, match.winners)


def test_changing_a_clones_hands_leaves_the_original_alone() -> None:
    """What the Monte Carlo bots do to a clone: deal it other hidden hands."""
    match = new_match("hexathlon", seed=bytes(range(32)))
    for _ in range(4):  # one whole trick: every hand one card shorter
        seat = match.to_act
        assert seat is not None
        match.apply(seat, match.legal_actions()[0])
    hands = match.hands
    swapped = (hands[0], hands[2], hands[1], hands[3])
    other = match.with_hidden_hands(0, swapped)
    assert other.hands == swapped and match.hands == hands
    assert other.round is not None and match.round is not None
    other.round.hands[0] = 0
    assert match.hands == hands
