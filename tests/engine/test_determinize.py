"""Determinization: rebuilt states agree with what the seat has seen, and forks are independent."""

from __future__ import annotations

import copy
import random

import pytest

from cardarena.clients.bots import RandomBot, SeatState, play_local
from cardarena.engine import GAMES, Match, Projector, legal_actions_for, new_match, setup, view
from cardarena.engine.cards import parse_cards
from cardarena.engine.copies import fork
from cardarena.engine.determinize import (
    Determinizer,
    Hidden,
    InconsistentDeal,
    determinize,
    sample_hands,
    with_hands,
)
from cardarena.engine.events import CardPlayed, Event, RoundStarted
from cardarena.engine.jokers import renamed_mask

from .properties_support import numbered_by

GAME_PLAYERS = [(game, n) for game, spec in GAMES.items() for n in spec.players]


class CheckingBot:
    """A random player that, every few decisions, rebuilds the match from its own log and
    checks the rebuilt state against its SeatState and against the real match."""

    name = "check"

    def __init__(self, seat: int, real: Match, every: int = 3) -> None:
        self.inner = RandomBot(seed=seat)
        self.rng = random.Random(seat)
        self.determinizer = Determinizer(seat)
        self.real = real
        self.every = every
        self.calls = 0
        self.checked = 0

    def choose(self, state: SeatState) -> int:
        self.calls += 1
        if self.calls % self.every == 0:
            self.check(state)
        return self.inner.choose(state)

    def check(self, state: SeatState) -> None:
        hidden = self.determinizer.update(state.events)
        assert hidden.pool == state.unseen
        assert hidden.hand == state.hand
        hands = sample_hands(hidden, self.rng.randrange)
        for seat, hand in enumerate(hands):
            assert hand.bit_count() == state.hand_sizes[seat]
            if seat != state.seat:
                assert not hand & hidden.forbidden[seat], "a sample broke a shown void or pass"
        match = self.determinizer.build(hands)
        seen = view(match, state.seat)
        own = seen.hands[state.seat]
        assert own is not None and own.mask == state.hand
        assert seen.to_act == state.seat and list(seen.legal_actions) == state.legal
        assert list(seen.trick) == [card for _, card in state.trick]
        assert seen.table.mask == state.table
        assert list(seen.hand_sizes) == state.hand_sizes
        assert list(seen.totals) == list(state.totals)
        if state.kind == "hand":
            assert [d.mask for d in seen.dead] == state.dead
        if state.kind == "fan_tan":
            assert list(seen.passes) == state.passes
        if state.tricks_won and seen.tricks_won:
            assert list(seen.tricks_won) == state.tricks_won
        # The real hands, the Jokers under the seat's own numbers, are one of the consistent
        # deals (a Joker it has not seen yet takes a number it has not given).
        names = numbered_by(self.real, state.seat)
        real = [renamed_mask(hand, names) for hand in self.real.hands]
        truth = self.determinizer.build(real)
        assert list(truth.hands) == real
        self.checked += 1


def play_checked(
    game: str, players: int, seed: bytes, options: dict[str, object] | None = None
) -> tuple[Match, list[CheckingBot]]:
    """``play_local``'s loop, keeping the real match where the checking bots can see it."""
    match = setup(game, players=players, options=options).start(seed)
    bots = [CheckingBot(seat, match) for seat in range(players)]
    states = [SeatState("local", seat) for seat in range(players)]
    projectors = [Projector(seat) for seat in range(players)]
    seen = 0
    while not match.over:
        for event in match.log[seen:]:
            for state, projector in zip(states, projectors, strict=True):
                state.observe(projector.project(event))
        seen = len(match.log)
        seat = match.to_act
        assert seat is not None
        states[seat].legal = legal_actions_for(match, seat)
        match.apply(seat, bots[seat].choose(states[seat]))
        states[seat].legal = []
    return match, bots


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_rebuilt_states_agree_with_the_seat_view(game: str, players: int) -> None:
    match, bots = play_checked(game, players, bytes([7, players]) * 16)
    assert match.over
    assert sum(b.checked for b in bots) > 5


VARIANTS = [
    ("pentathlon", 4, {"fan_tan": {"voluntary_pass": True}, "first_dealer": "random"}),
    ("hexathlon", 5, {"rounds": ["fan_tan", "trumps", "fan_tan", "queens"]}),
    ("crazy_sixes", 3, {"deck": 40, "target_score": 60, "first_dealer": "random"}),
    ("triathlon", 3, {"first_dealer": "random", "max_deals": 3}),
]


@pytest.mark.parametrize(("game", "players", "options"), VARIANTS)
def test_rebuilt_states_agree_under_options(
    game: str, players: int, options: dict[str, object]
) -> None:
    """Voluntary passes (whose ``forced`` flag is hidden), repeated Fan Tans, a random dealer."""
    match, bots = play_checked(game, players, bytes([8, players]) * 16, options)
    assert match.over and sum(b.checked for b in bots) > 5


def test_fork_is_independent_and_plays_like_a_deep_copy() -> None:
    """``fork`` (and so :meth:`Match.clone`) copies the state one container deep; a deep copy
    is the reference, so that a deeper state added later is noticed."""
    for game in ("triathlon", "crazy_sixes", "hexathlon"):
        match = new_match(game, seed=bytes(range(32)))
        rng = random.Random(3)
        for _ in range(40):
            seat = match.to_act
            assert seat is not None
            match.apply(seat, rng.choice(match.legal_actions()))
        before = list(match.log)
        forked, cloned = fork(match), copy.deepcopy(match)
        for copy_ in (forked, cloned):
            moves = random.Random(9)
            while not copy_.over:
                seat = copy_.to_act
                assert seat is not None
                copy_.apply(seat, moves.choice(copy_.legal_actions()))
        assert forked.log == cloned.log and forked.totals == cloned.totals
        assert match.log == before and not match.over, "the original is untouched"


def test_with_hands_swaps_only_hidden_hands() -> None:
    match = new_match("pentathlon", seed=bytes(32))
    hands = match.hands
    swapped = (hands[0], hands[2], hands[1], hands[3])
    with pytest.raises(ValueError, match=r"size|same cards"):
        with_hands(match, 0, (hands[1], hands[0], hands[2], hands[3]))
    other = with_hands(match, 0, swapped)
    assert other.hands == swapped and match.hands == hands


def test_sampling_respects_constraints_and_finds_tight_deals() -> None:
    # Seat 1 may hold only clubs, seat 2 anything: the matching must give seat 1 the clubs.
    pool = parse_cards("2C 3C 4D 5D")
    hidden = Hidden(
        viewer=0,
        round=0,
        hand=0,
        pool=pool,
        sizes=(0, 2, 2),
        forbidden=(0, parse_cards("4D 5D"), 0),
        spent=(0, 0, 0),
    )
    for k in range(20):
        rng = random.Random(k)
        hands = sample_hands(hidden, rng.randrange, tries=0 if k % 2 else 8)
        assert hands[1] == parse_cards("2C 3C") and hands[2] == parse_cards("4D 5D")
    impossible = Hidden(0, 0, 0, pool, (0, 2, 2), (0, parse_cards("4D 5D 3C"), 0), (0, 0, 0))
    with pytest.raises(InconsistentDeal):
        sample_hands(impossible, random.Random(0).randrange)


def test_unconstrained_samples_spread_over_the_pool() -> None:
    pool = parse_cards("2C 3C 4C 5C 6C 7C")
    hidden = Hidden(0, 0, 0, pool, (0, 3, 3), (0, 0, 0), (0, 0, 0))
    rng = random.Random(1)
    held = [0] * 64
    for _ in range(300):
        hands = sample_hands(hidden, rng.randrange)
        assert hands[1] | hands[2] == pool and not hands[1] & hands[2]
        for card in range(64):
            held[card] += hands[1] >> card & 1
    assert all(100 < held[c] < 200 for c in range(6))


def test_determinize_function_and_a_deal_that_does_not_fit() -> None:
    _, states = play_local("heptathlon", [RandomBot(seed=s) for s in range(3)], bytes([5]) * 32)
    events = states[1].events
    # Stop the log where seat 1 is about to play its first card of the third round.
    third = [i for i, e in enumerate(events) if isinstance(e, RoundStarted)][2]
    cut = next(
        i
        for i in range(third, len(events))
        if isinstance(events[i], CardPlayed) and events[i].seat == 1  # type: ignore[union-attr]
    )
    match = determinize(events[:cut], 1, random.Random(0).randrange)
    assert match.to_act == 1 and match.round_index == 2
    assert match.totals == tuple(e for e in view(match, 1).totals)
    determinizer = Determinizer(1)
    hidden = determinizer.update(events[:cut])
    rest = hidden.pool
    with pytest.raises(InconsistentDeal):
        determinizer.build((hidden.hand, hidden.hand, rest))  # seat 1's cards dealt twice


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_a_sample_for_a_seat_not_to_act_fits_whose_turn_it_is(game: str, players: int) -> None:
    """The turn is public and may depend on the hands: the holder of Crazy Sixes' 6O starts,
    and a seat asked where passes are forced holds a playable card. Resampled for a seat that
    is not to act (OpenSpiel's ``resample_from_infostate`` for any player), a world once put
    another seat to act or failed as a forced pass where the log stops (a research review's
    find); each is drawn again now."""
    rng = random.Random(players)
    match = setup(game, players=players).start(bytes([9, players]) * 16)
    projectors = [Projector(seat) for seat in range(players)]
    logs: list[list[Event]] = [[] for _ in range(players)]
    seen = decisions = checked = 0
    while not match.over:
        for event in match.log[seen:]:
            for reader, projector in enumerate(projectors):
                shown = projector.project(event)
                if shown is not None:
                    logs[reader].append(shown)
        seen = len(match.log)
        seat = match.to_act
        assert seat is not None
        if decisions % 5 == 0:
            for viewer in range(players):
                if viewer != seat:
                    world = determinize(logs[viewer], viewer, rng.randrange, to_act=seat)
                    assert world.to_act == seat
                    own = view(match, viewer).hands[viewer]  # its Jokers under its numbers
                    assert own is not None and world.hands[viewer] == own.mask
                    checked += 1
        decisions += 1
        match.apply(seat, rng.choice(match.legal_actions()))
    assert checked > 10


def test_without_the_turn_a_sample_may_put_another_seat_to_act() -> None:
    """Why ``to_act`` is needed: the first hand of Crazy Sixes is started by the holder of
    6O, which only the turn tells a seat that does not hold it."""
    match = setup("crazy_sixes", players=3).start(bytes([0, 3]) * 16)
    projector = Projector(0)
    log = [shown for event in match.log if (shown := projector.project(event)) is not None]
    assert match.to_act == 1
    rng = random.Random(1)
    free = {determinize(log, 0, rng.randrange).to_act for _ in range(40)}
    assert free == {1, 2}
    fitted = {determinize(log, 0, rng.randrange, to_act=1).to_act for _ in range(40)}
    assert fitted == {1}
