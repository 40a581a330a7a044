"""Replay: a recorded log reproduces the match exactly, and any tampering is named."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import TypeVar

import pytest

from cardarena.engine import ReplayError, new_match, replay
from cardarena.engine.cards import CardSet
from cardarena.engine.events import CardPlayed, Dealt, Event, RoundScored, TrickWon

from ..helpers import play_out

SEED = bytes(range(32))
E = TypeVar("E", bound=Event)


def first_of(log: list[Event], kind: type[E]) -> tuple[int, E]:
    """The first event of ``kind`` in ``log``, and its index."""
    return next((i, e) for i, e in enumerate(log) if isinstance(e, kind))


def recorded(game: str = "hexathlon", players: int = 4) -> list[Event]:
    return list(play_out(new_match(game, players=players, seed=SEED)))


@pytest.mark.parametrize(
    ("game", "players"), [("hexathlon", 4), ("crazy_sixes", 3), ("triathlon", 3)]
)
def test_replay_reproduces_with_and_without_the_seed(game: str, players: int) -> None:
    log = recorded(game, players)
    for match in (replay(log), replay(log, seed=SEED)):
        assert match.over and match.log == log


def test_a_prefix_replays_to_the_same_point() -> None:
    log = recorded()
    original = new_match("hexathlon", players=4, seed=SEED)
    played = 0
    for i, event in enumerate(log[1:], start=1):
        if isinstance(event, CardPlayed):
            played += 1
            if played == 30:
                cut = i + 1
                break
    prefix = log[:cut]
    match = replay(prefix)
    for event in prefix[len(original.log) :]:
        if isinstance(event, CardPlayed):
            original.apply(event.seat, event.card)
    assert match.log == prefix and match.to_act == original.to_act


def test_changed_trick_winner_is_caught_at_its_index() -> None:
    log = recorded()
    index, won = first_of(log, TrickWon)
    log[index] = dataclasses.replace(won, seat=(won.seat + 1) % 4)
    with pytest.raises(ReplayError) as caught:
        replay(log)
    assert caught.value.index == index


def test_changed_score_is_caught() -> None:
    log = recorded()
    index, scored = first_of(log, RoundScored)
    log[index] = dataclasses.replace(scored, scores=(Fraction(0),) * 4)
    with pytest.raises(ReplayError, match=f"event {index}"):
        replay(log)


def test_illegal_card_is_caught() -> None:
    log = recorded()
    index, played = first_of(log, CardPlayed)
    log[index] = dataclasses.replace(played, seat=(played.seat + 1) % 4)
    with pytest.raises(ReplayError, match="is to act"):
        replay(log)


def test_forged_deal_passes_without_seed_but_fails_with_it() -> None:
    log = recorded("pentathlon")
    index, dealt = first_of(log, Dealt)
    hands = [h for h in dealt.hands if h is not None]
    swapped = (hands[1], hands[0], *hands[2:])
    forged = [*log[:index], dataclasses.replace(dealt, hands=swapped)]
    replay(forged)  # a consistent deal: only the seed can tell it was not the one dealt
    with pytest.raises(ReplayError, match=f"event {index}"):
        replay(forged, seed=SEED)


def test_impossible_deal_is_caught_without_seed() -> None:
    log = recorded("pentathlon")
    index, dealt = first_of(log, Dealt)
    first = dealt.hands[0]
    assert first is not None
    doubled = (first, first, *dealt.hands[2:])
    with pytest.raises(ReplayError, match=r"dealt twice|cards"):
        replay([*log[:index], dataclasses.replace(dealt, hands=doubled)])
    short = (CardSet(first.mask & (first.mask - 1)), *dealt.hands[1:])
    with pytest.raises(ReplayError, match="cards"):
        replay([*log[:index], dataclasses.replace(dealt, hands=short)])


def test_wrong_seed_and_truncated_or_extended_logs() -> None:
    log = recorded()
    with pytest.raises(ReplayError, match="commitment"):
        replay(log, seed=bytes(32))
    with pytest.raises(ReplayError, match="ends where the rules give"):
        replay(log[:-1])
    with pytest.raises(ReplayError, match="after the end"):
        replay([*log, log[-3]])
    with pytest.raises(ReplayError, match="starts with MatchStarted"):
        replay(log[1:])
