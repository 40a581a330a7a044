"""The optional compiled engine (mypyc) behaves exactly as the pure-Python reference.

Runs when the build is present (``bash scripts/test.sh`` builds it where gcc and the Python
headers are; ``bash scripts/build_compiled_engine.sh`` alone, or the directory named by
``CARDARENA_COMPILED_ENGINE``); otherwise it is skipped, and says so, except under
``CARDARENA_REQUIRE_COMPILED=1`` (CI), where it fails. The
compiled build is a copy of the engine with its hot modules compiled, imported by a child
process through ``PYTHONPATH``; both sides fingerprint random matches of every
configuration (tests/engine/differential_play.py) and the fingerprints must be equal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.engine.differential_play import LAYOUTS_COPY_AS_THEMSELVES, fingerprints
from tests.helpers import run_python

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CARDARENA_COMPILED_ENGINE", ROOT / "build" / "compiled-engine"))
SCRIPT = Path(__file__).with_name("differential_play.py")
BUILD_SCRIPT = ROOT / "scripts" / "build_compiled_engine.sh"


def compiled_modules() -> list[str]:
    """The modules the build script compiles (its ``MODULES=(...)`` line)."""
    line = next(x for x in BUILD_SCRIPT.read_text().splitlines() if x.startswith("MODULES=("))
    return line.removeprefix("MODULES=(").removesuffix(")").split()


COMPILED_CHECK = (
    "import importlib, importlib.machinery as m, sys;"
    "mods = [importlib.import_module('cardarena.engine.' + n) for n in sys.argv[1:]];"
    "print([mod.__name__ for mod in mods"
    " if not str(mod.__file__).endswith(tuple(m.EXTENSION_SUFFIXES))])"
)


def why_not_testable() -> str | None:
    """Why the build cannot be compared: absent, or built from other engine sources."""
    copy = BUILD / "cardarena" / "engine"
    if not copy.is_dir():
        return f"no compiled engine at {BUILD} (bash scripts/build_compiled_engine.sh builds one)"
    stale = [
        source.name
        for source in sorted((ROOT / "engine").glob("*.py"))
        if not (copy / source.name).is_file()
        or (copy / source.name).read_bytes() != source.read_bytes()
    ]
    if stale:
        return f"the compiled engine at {BUILD} is stale ({', '.join(stale)}): rebuild it"
    return None


WHY_NOT = why_not_testable()
REQUIRE_COMPILED = os.environ.get("CARDARENA_REQUIRE_COMPILED") == "1"
"""Set by ``.ci/run``: there a missing or stale build fails these tests instead of skipping."""


@pytest.fixture(autouse=True)
def _compiled_build() -> None:
    if WHY_NOT is None:
        return
    if REQUIRE_COMPILED:
        pytest.fail(WHY_NOT)
    pytest.skip(WHY_NOT)


def run_compiled(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(BUILD)}
    done = run_python(*args, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_child_process_imports_the_compiled_modules() -> None:
    """Otherwise the comparison below would compare the pure engine with itself."""
    modules = compiled_modules()
    assert {"match", "tricks", "crazy_sixes", "sixes", "fantan"} <= set(modules)
    assert run_compiled("-c", COMPILED_CHECK, *modules).strip() == "[]"


def test_compiled_and_pure_engines_agree_on_every_configuration() -> None:
    compiled = json.loads(run_compiled(str(SCRIPT)))
    pure = fingerprints()
    assert compiled.keys() == pure.keys()
    differ = sorted(key for key in pure if compiled[key] != pure[key])
    assert not differ, f"the compiled engine differs from the reference on {differ}"


def test_a_compiled_layout_copies_and_unpickles_as_itself() -> None:
    assert run_compiled("-c", LAYOUTS_COPY_AS_THEMSELVES).strip() == "True"


CLONE_CHECK = (
    "from cardarena.engine import new_match;"
    "m = new_match('hexathlon', seed=bytes(32)); c = m.clone();"
    "c.apply(c.to_act, c.legal_actions()[0]); print(len(m.log) < len(c.log))"
)


def test_a_compiled_match_can_be_cloned() -> None:
    """Monte Carlo bots clone matches. ``clone`` is written out per class (the match, each
    round core and schedule): mypyc's classes cannot be copied with ``copy.copy``. The
    differential test above also plays a clone in every configuration on both builds."""
    assert run_compiled("-c", CLONE_CHECK).strip() == "True"
