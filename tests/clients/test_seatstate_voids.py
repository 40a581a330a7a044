"""What a seat infers about the others' hands from their play is never wrong: every void it
records holds in the real hands, Jokers played to a led suit included."""

from __future__ import annotations

import random

from cardarena.clients.bots import SeatState
from cardarena.engine import setup
from cardarena.engine.cards import JOKER_MASK, SUIT_MASKS
from cardarena.engine.events import CardPlayed


def test_recorded_voids_hold_in_the_real_hands() -> None:
    joker_voids = 0
    for game in ("triathlon", "hexathlon"):
        for n in range(12):
            match = setup(game, players=3).start(bytes([n]) * 32)
            state = SeatState("m", 0)
            rng = random.Random(n)
            for event in match.log:
                state.observe(event)
            while (seat := match.to_act) is not None:
                led = state.trick[0][1] if state.trick else None
                events = match.apply(seat, rng.choice(match.legal_actions()))
                for event in events:
                    state.observe(event)
                    joker = isinstance(event, CardPlayed) and (1 << event.card) & JOKER_MASK
                    if joker and led is not None and not (1 << led) & JOKER_MASK:
                        joker_voids += 1
                        assert state.void[seat] & (1 << (led // 13))
                rnd = match.round
                if rnd is None or match.over:
                    continue
                for other, voids in enumerate(state.void):
                    for suit in range(4):
                        if voids >> suit & 1:
                            assert not rnd.hands[other] & SUIT_MASKS[suit], (game, n, other, suit)
    assert joker_voids > 0  # the case this test is for did come up
