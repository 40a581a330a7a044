"""The research interfaces show no seat how the engine numbers Triathlon's Jokers.

Beside ``tests/engine/test_joker_names.py`` (views, projected logs, legal actions): the same
match with each deal's Jokers numbered otherwise gives every seat the same tensors (seat and
public, with and without the round's memory), observation and information-state strings,
and PettingZoo's action mask, at every step.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings

from cardarena.clients.interop.encoding import (
    InformationStrings,
    Layout,
    RoundMemory,
    observation_string,
)
from cardarena.engine import setup

from ..engine.properties_support import Config, over_random_matches
from ..engine.test_joker_names import TRIATHLONS, deals_twice

SETTINGS = settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@over_random_matches(TRIATHLONS, SETTINGS)
def test_renumbering_the_dealt_jokers_changes_no_tensor_or_string(
    config: Config, seed: bytes, rng_seed: int
) -> None:
    layout = Layout(setup(config.game, players=config.players, options=config.options))
    encodings = [
        layout.encoding(recall=recall, private=private)
        for recall in (False, True)
        for private in (True, False)
    ]
    strings, twin_strings = InformationStrings(), InformationStrings()
    for real, twin, _, _ in deals_twice(config, seed, rng_seed):
        for seat in range(config.players):
            for encoding in encodings:
                mine = encoding.encode(real, seat, RoundMemory())
                its = encoding.encode(twin, seat, RoundMemory())
                assert np.array_equal(mine, its), (seat, encoding.recall, encoding.private)
            assert observation_string(real, seat) == observation_string(twin, seat)
            assert strings(real, seat) == twin_strings(twin, seat)
