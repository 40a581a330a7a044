"""The bounds OpenSpiel is given hold over many matches (the OpenSpiel checks play only one of
each): every total within [low, high], every match within its decisions."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cardarena.clients.interop.bounds import bounds
from cardarena.clients.interop.params import setup_of

from .games import EVERY_COUNT, VARIANTS

CASES = [(g, {"players": n}) for g, n in EVERY_COUNT] + VARIANTS


@pytest.mark.parametrize(
    ("game", "params"), CASES, ids=[f"{g}-{i}" for i, (g, _) in enumerate(CASES)]
)
def test_random_matches_stay_within_the_bounds(game: str, params: dict[str, Any]) -> None:
    match_setup = setup_of(game, params)
    limits = bounds(match_setup)
    rng = random.Random(game)
    for _ in range(40):
        match = match_setup.start(rng.randbytes(32))
        decisions = 0
        while not match.over:
            assert match.to_act is not None
            match.apply(match.to_act, rng.choice(match.legal_actions()))
            decisions += 1
        assert decisions <= limits.decisions
        assert all(limits.low <= total <= limits.high for total in match.totals), match.totals
