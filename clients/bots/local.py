"""Play a match in-process, bots against the engine, with no server: for evaluating bots fast.

Each seat's bot sees exactly what it would see over the network: its own projection of the
log (``cardarena.engine.Projector``) folded into a :class:`SeatState`, and the legal actions
when it is to act.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardarena.engine import Match, Projector, setup

from .base import Bot
from .state import SeatState


def play_local(
    game: str,
    bots: Sequence[Bot],
    seed: bytes,
    *,
    options: Mapping[str, Any] | None = None,
    max_actions: int = 100_000,
) -> tuple[Match, list[SeatState]]:
    """Play one match to the end; seat ``i`` is ``bots[i]``. Returns the match and each seat's state."""
    match = setup(game, players=len(bots), options=options).start(seed)
    states = [SeatState("local", seat) for seat in range(len(bots))]
    projectors = [Projector(seat) for seat in range(len(bots))]
    seen = 0
    for _ in range(max_actions):
        for event in match.log[seen:]:
            for state, projector in zip(states, projectors, strict=True):
                state.observe(projector.project(event))
                state.seq += 1
        seen = len(match.log)
        seat = match.to_act
        if seat is None:
            return match, states
        state = states[seat]
        state.legal = match.legal_actions()
        action = bots[seat].choose(state)
        state.legal = []
        match.apply(seat, action)
    raise RuntimeError(f"{game} did not end within {max_actions} actions")
