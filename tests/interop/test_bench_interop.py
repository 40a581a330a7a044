"""scripts/bench_interop.py's choice of PettingZoo peers: Leduc hold'em (issue 32's target) where
it is importable, the other classic turn-based games otherwise. No timing."""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from scripts.bench_interop import (
    EXTRA_PEERS,
    LEDUC,
    SEEDED_ONCE,
    ZooCell,
    stand_in,
    zoo_columns,
    zoo_peers,
)


@pytest.fixture
def fresh_modules() -> Iterator[None]:
    """Forget, afterwards, the pygame stand-in and the classic games imported through it, so
    that no other test imports either."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.split(".")[0] == "pygame" or name.startswith("pettingzoo.classic"):
            del sys.modules[name]


@pytest.mark.usefixtures("fresh_modules")
def test_leduc_holdem_is_the_target_where_rlcard_is_installed() -> None:
    if importlib.util.find_spec("rlcard") is None:
        message = "rlcard (the bench extra) is not installed: `bash scripts/bootstrap.sh`"
        if os.environ.get("CARDARENA_REQUIRE_E2E") == "1":
            pytest.fail(f"{message}, and CARDARENA_REQUIRE_E2E=1 requires it")
        pytest.skip(message)
    peers, why = zoo_peers()
    assert [name for name, _ in peers] == [LEDUC, *EXTRA_PEERS]
    assert why.startswith(f"{LEDUC} the target")
    assert zoo_columns([name for name, _ in peers])[:2] == [
        (LEDUC, f"peer {LEDUC} env()"),
        (f"{LEDUC} {SEEDED_ONCE}", f"peer {LEDUC} env() {SEEDED_ONCE}"),
    ]
    # The benchmark's loop plays it, whether pygame is real or stood in.
    cell = ZooCell(f"peer {LEDUC} env()", LEDUC, dict(peers)[LEDUC].env)
    turns, decisions = cell.play(random.Random(0))
    assert turns == decisions >= 2


@pytest.mark.usefixtures("fresh_modules")
def test_without_rlcard_the_peers_are_the_other_classic_games(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [n for n in sys.modules if n.startswith("pettingzoo.classic")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "rlcard", None)  # `import rlcard` raises ImportError
    peers, why = zoo_peers()
    assert [name for name, _ in peers] == list(EXTRA_PEERS)
    assert f"{LEDUC} is not importable here" in why
    assert "rlcard" in why
    assert [title for title, _ in zoo_columns(list(EXTRA_PEERS))] == list(EXTRA_PEERS)


def test_the_pygame_stand_in_answers_any_attribute_but_dunders() -> None:
    pygame = stand_in("pygame")
    assert pygame.font.Font.__name__ == "pygame.font.Font"
    with pytest.raises(AttributeError):
        _ = pygame.__path__


class _Recorder:
    """An environment of no turns that records its resets."""

    def __init__(self) -> None:
        self.resets: list[dict[str, Any]] = []

    def reset(self, **kwargs: Any) -> None:
        self.resets.append(kwargs)

    def agent_iter(self) -> Iterator[str]:
        return iter(())


@pytest.mark.parametrize("every", [True, False])
def test_a_peer_seeded_once_is_reset_without_a_seed_after_its_first_match(every: bool) -> None:
    recorder = _Recorder()
    cell = ZooCell("peer", "peer", lambda: recorder, seed_every_match=every)
    for _ in range(3):
        cell.play(random.Random(0))
    expected = [{"seed": 1}, {"seed": 2}, {"seed": 3}] if every else [{"seed": 1}, {}, {}]
    assert recorder.resets == expected
