"""The engine imports no I/O, clock or global randomness: enforced here, not by habit.

An allow-list, not a deny-list: every module the engine imports must be one of these (or a
module of the engine itself), and it may not call the built-ins that reach the outside world.
``hashlib`` is allowed because the fair-deal stream is SHA-256 of the seed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
ALLOWED_IMPORTS = {
    "__future__",
    "collections",
    "collections.abc",
    "copy",
    "dataclasses",
    "fractions",
    "functools",
    "hashlib",
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
MODULES = sorted(ENGINE.glob("*.py"))


def test_engine_modules_are_found() -> None:
    assert len(MODULES) >= 10


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_module_imports_only_pure_modules(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 0:
                continue  # the engine's own modules
            names = [node.module or ""]
        else:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in FORBIDDEN_CALLS, (
                    f"{path.name}:{node.lineno} calls {node.func.id}()"
                )
            continue
        for name in names:
            assert name in ALLOWED_IMPORTS, f"{path.name}:{node.lineno} imports {name}"


def test_the_check_catches_an_impure_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import random\n")
    tree = ast.parse(bad.read_text())
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported == ["random"] and "random" not in ALLOWED_IMPORTS
