"""The baseline: a uniformly random legal action."""

from __future__ import annotations

import random

from .state import SeatState


class RandomBot:
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: SeatState) -> int:
        return self.rng.choice(state.legal)
