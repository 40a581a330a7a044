"""The competition rules import no I/O, clock or global randomness, like the engine.

The same scan as tests/engine/test_engine_purity.py, with the competition's own allow-list:
the engine's, and ``math``, ``statistics`` and ``itertools`` for the statistics and the
schedule, ``openskill.models`` for the ratings, ``cardarena.engine`` should a rule need the
engine. The randomness of a tournament is in its seeds (:mod:`cardarena.competition.schedule`),
never in ``random``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ..engine.test_engine_purity import (
    ALLOWED_IMPORTS,
    ENGINE,
    impurities,
    impurities_with_line,
    package_modules,
)

COMPETITION = ENGINE.parent / "competition"
ALLOWED = ALLOWED_IMPORTS | {
    "itertools",
    "math",
    "statistics",
    "openskill.models",
    "cardarena.engine",
}
MODULES = package_modules(COMPETITION)


def test_competition_modules_are_found() -> None:
    assert len(MODULES) >= 7


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(COMPETITION)))
def test_competition_module_imports_only_pure_modules(path: Path) -> None:
    assert impurities(path, COMPETITION, ALLOWED) == []


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("import random", "imports random"),
        ("from time import monotonic", "imports time"),
        ("from cardarena.server import app", "imports cardarena.server"),
        ("from cardarena.clients import tournament", "imports cardarena.clients"),
        ("from .. import server", "imports .."),
        ("print('standings')", "calls print()"),
    ],
)
def test_the_check_catches_an_impure_line(tmp_path: Path, line: str, found: str) -> None:
    assert impurities_with_line(tmp_path, COMPETITION / "stats.py", line, ALLOWED) == [found]
