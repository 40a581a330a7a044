"""The engine imports no I/O, clock or global randomness: enforced here, not by habit.

An allow-list, not a deny-list: every module the engine imports must be one of these (or a
module of the engine itself), and it may not call the built-ins that reach the outside world.
``hashlib`` is allowed because the fair-deal stream is SHA-256 of the seed; ``abc`` and ``enum``
because the round cores' traits (``traits.py``) are declared with them; ``math`` for the
``gcd`` of exact scores (``exact.py``).
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Collection
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
ALLOWED_IMPORTS = {
    "__future__",
    "abc",
    "collections",
    "collections.abc",
    "copy",
    "dataclasses",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "math",
    "struct",
    "typing",
}
FORBIDDEN_CALLS = {
    "open",
    "print",
    "input",
    "exec",
    "eval",
    "compile",
    "__import__",
    "breakpoint",
    "hash",
    "id",
}


def package_modules(root: Path = ENGINE) -> list[Path]:
    """Every module of the package at ``root`` (the engine unless told), in path order."""
    return sorted(root.rglob("*.py"))


def impurities(
    path: Path, root: Path = ENGINE, allowed: Collection[str] = ALLOWED_IMPORTS
) -> list[str]:
    """What in the module at ``path`` of the package at ``root`` (the engine unless told)
    breaks the rules: each forbidden import (a module outside ``allowed``, or a relative import
    reaching out of the package) and each call of a forbidden built-in, as ``file:line
    what``. tests/competition/test_purity.py runs it over the competition rules."""
    where = path.relative_to(root)
    depth = len(where.parts) - 1  # how many packages below the engine the module sits
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if 0 < node.level <= depth + 1:
                continue  # the engine's own modules
            names = [f"{'.' * node.level}{node.module or ''}"]
        else:
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in FORBIDDEN_CALLS
            ):
                found.append(f"{where}:{node.lineno} calls {node.func.id}()")
            continue
        found += [f"{where}:{node.lineno} imports {n}" for n in names if n not in allowed]
    return found


MODULES = package_modules()


def test_engine_modules_are_found() -> None:
    assert len(MODULES) >= 10


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ENGINE)))
def test_engine_module_imports_only_pure_modules(path: Path) -> None:
    assert impurities(path) == []


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("import random", "imports random"),
        ("import os.path", "imports os.path"),
        ("from time import monotonic", "imports time"),
        ("from .. import server", "imports .."),
        ("from ..clients import bots", "imports ..clients"),
        ("seed = open('seed').read()", "calls open()"),
    ],
)
def test_the_check_catches_an_impure_import(tmp_path: Path, line: str, found: str) -> None:
    """The check above, run on a copy of an engine module before and after one impure line."""
    assert impurities_with_line(tmp_path, ENGINE / "cards.py", line) == [found]


def impurities_with_line(
    tmp_path: Path, module: Path, line: str, allowed: Collection[str] = ALLOWED_IMPORTS
) -> list[str]:
    """What the check finds (each finding without its ``file:line``) in a copy of ``module``,
    in a package named as its folder, once ``line`` is added; the copy as it was is clean."""
    copy = tmp_path / module.parent.name / module.name
    copy.parent.mkdir()
    shutil.copy(module, copy)
    assert impurities(copy, copy.parent, allowed) == []
    copy.write_text(f"{copy.read_text()}\n{line}\n")
    return [f.split(" ", 1)[1] for f in impurities(copy, copy.parent, allowed)]
