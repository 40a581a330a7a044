"""Fingerprints of the engine's behaviour over every configuration, for comparing two builds.

Why: the optional compiled engine (scripts/build_compiled_engine.sh) must behave exactly as
the pure-Python reference. The two cannot be imported into one process (both are
``cardarena.engine``), so each process runs :func:`fingerprints` and the test compares the
results: test_compiled_engine.py runs it in-process on the pure engine and, as a script
(``python tests/engine/differential_play.py``, printing JSON), under the compiled build.

One fingerprint is the SHA-256 of everything observable along a random match of one
configuration of ``properties_support.ALL_CONFIGS`` (every game, player count and option
the property tests cover): before each action the seat to act, the legal actions and mask,
and what a refused action says; the events each action returns; the events of a clone
played to its end from one point of the walk (the original unchanged by it); the final log,
totals and winners; a replay of the log; and a match that waits for its deal seed and is
given one.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

if __name__ == "__main__":  # run as a script: make ``tests`` importable from the repository
    sys.path.insert(1, str(Path(__file__).resolve().parents[2]))

from cardarena.engine import ActionError, Event, Match, mix_seed, replay, setup
from tests.engine.properties_support import ALL_CONFIGS, Config, choose

SEEDS = (0, 1)
MAX_STEPS = 20_000
CLONE_AT = 30
"""The step at which a walk also plays a clone of its match to the end (Match.clone)."""


LAYOUTS_COPY_AS_THEMSELVES = (
    "import copy, pickle;"
    "from cardarena.engine.fantan import FAN_TAN_LAYOUTS;"
    "from cardarena.engine.sixes import SIXES_LAYOUT;"
    "print(all(f(x) is x for x in (*FAN_TAN_LAYOUTS, SIXES_LAYOUT)"
    " for f in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x)))))"
)
"""The table layouts are one object per kind, shared by every match: a copied or unpickled
match shares them too (tests/engine/test_compiled_engine.py runs this on the compiled build)."""


def _seed(config: Config, number: int) -> bytes:
    return hashlib.sha256(f"differential/{config.game}/{config.options}/{number}".encode()).digest()


def _refusal(match: Match, seat: int, action: int) -> str:
    """What ``apply`` says to an action it refuses (a refused action changes nothing)."""
    try:
        match.apply(seat, action)
    except ActionError as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError(f"seat {seat}'s action {action} was not refused")


def _clone_played_apart(match: Match) -> list[Event]:
    """The events of a clone of ``match`` played to its end; the original must not change."""
    before = (list(match.log), match.hands, match.totals, match.to_act, match.legal_actions())
    clone, rng = match.clone(), random.Random(len(match.log))
    while (seat := clone.to_act) is not None:
        clone.apply(seat, choose(rng, clone.legal_actions()))
    after = (list(match.log), match.hands, match.totals, match.to_act, match.legal_actions())
    if after != before:
        raise AssertionError("playing a clone changed its original")
    return clone.log[len(before[0]) :]


def _walk(match: Match, rng: random.Random, digest: hashlib._Hash) -> None:
    for step in range(MAX_STEPS):
        seat = match.to_act
        if seat is None:
            break
        if step == CLONE_AT:
            digest.update(repr(_clone_played_apart(match)).encode())
        legal = match.legal_actions()
        digest.update(repr((seat, legal, match.legal_mask(), match.default_action())).encode())
        if step % 7 == 0:  # a refused action now and then: its error must read the same
            wrong = next(a for a in range(200) if a not in legal)
            digest.update(_refusal(match, seat, wrong).encode())
            digest.update(_refusal(match, (seat + 1) % match.players, legal[0]).encode())
        digest.update(repr(match.apply(seat, choose(rng, legal))).encode())


def fingerprint(config: Config, number: int) -> str:
    seed = _seed(config, number)
    digest = hashlib.sha256()
    match = config.new(seed)
    _walk(match, random.Random(number), digest)
    digest.update(repr((match.over, match.totals, match.winners, match.log)).encode())
    digest.update(repr(replay(match.log, seed=seed).log).encode())
    waiting = setup(config.game, players=config.players, options=dict(config.options)).start(
        seed, dealing=False
    )
    digest.update(repr(waiting.deal_from(mix_seed(seed, [seed, None]))).encode())
    _walk(waiting, random.Random(number + 100), digest)
    digest.update(repr(waiting.log).encode())
    return digest.hexdigest()


def fingerprints(seeds: Sequence[int] = SEEDS) -> dict[str, str]:
    """``{configuration and seed: fingerprint}`` for every configuration."""
    return {
        f"{config.game}/{config.players}/{config.name or dict(config.options)}/{number}": (
            fingerprint(config, number)
        )
        for config in ALL_CONFIGS
        for number in seeds
    }


if __name__ == "__main__":
    json.dump(fingerprints(), sys.stdout, indent=0, sort_keys=True)
