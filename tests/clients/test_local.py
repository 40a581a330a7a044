"""In-process play: bots see only their projection, and matches end."""

from __future__ import annotations

import pytest

from cardarena.clients.bots import RandomBot, SeatState, play_local
from cardarena.engine import GAMES, PASS
from cardarena.engine.cards import JOKER_MASK, JOKERS

GAME_PLAYERS = [(game, n) for game, spec in GAMES.items() for n in spec.players]


class PeekingCheck:
    """A random bot that also checks the state it is given against the rules of visibility."""

    name = "check"

    def __init__(self) -> None:
        self.inner = RandomBot(seed=1)

    def choose(self, state: SeatState) -> int:
        assert state.legal
        for action in state.legal:
            if action < PASS:
                held = state.hand & JOKER_MASK if action in JOKERS else state.hand >> action & 1
                assert held, "every legal card is in the seat's own hand"
        assert state.hand.bit_count() == state.hand_sizes[state.seat]
        return self.inner.choose(state)


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_local_matches_end_and_states_agree(game: str, players: int) -> None:
    match, states = play_local(
        game, [PeekingCheck() for _ in range(players)], bytes([players]) * 32
    )
    assert match.over
    for state in states:
        assert state.over and tuple(state.totals) == match.totals and state.winners == match.winners
        assert state.hand == 0 or game == "crazy_sixes" or state.kind == "fan_tan"
