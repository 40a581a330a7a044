"""No module outside the registry compares a game or round kind to a string literal.

Why: a game is data (``engine/games.py``) and so is a kind of round (its ``RoundTraits``,
looked up once through the registry). Code that asks ``kind == "fan_tan"`` or
``game == "triathlon"`` restates a rule where the registry cannot see it, and silently
misses the next game or round kind. This scan finds every such question, so that a test can
keep the answer "none".

An AST scan of every Python module under ``engine/``, ``competition/``, ``clients/``,
``server/``, ``proto/`` and ``scripts/`` (``tests/`` may name kinds in its assertions;
``engine/games.py``, the registry, may name anything). It flags, where ``"name"`` is a game
of the registry (``GAMES``) or a round kind its games play (``ROUND_KINDS``) and ``x`` is a
game or a kind:

* ``x == "name"``, ``x != "name"``, ``x is "name"``, ``x is not "name"`` (either side);
* ``x in C`` / ``x not in C`` where ``C`` holds a name: a tuple, list or set literal, a
  ``set``/``frozenset``/``tuple``/``list`` call of one, a union (``|``, ``+``) of those, or a
  module-level constant bound to one in any scanned module (so ``SOLITAIRE_KINDS`` imported
  from another module counts); and ``"name" in x``;
* ``case "name":`` (alone or in an ``|`` pattern) of a ``match x:``.

``x`` is "a game or a kind" when the name of the expression says so: a variable, attribute,
keyword or subscript key containing ``kind``, ``game``, ``type`` or ``variant`` (``kind``,
``state.game``, ``opening.kind``, ``params["type"]``, ``step.kind``). That is what keeps the
scan precise where a kind's name is also a word of another vocabulary: ``lower == "pass"``
parses an action and ``step.what == "deal"`` is a replay step, not a round kind. A protobuf
oneof tag is never one either, though the codec calls it ``kind``: a ``.WhichOneof(...)``
call, or a name bound to one in the same function or module, is left alone.

The names come from the registry, so a new game or round kind is covered without touching
this script. ``tests/engine/test_kind_strings.py`` runs the scan with the test suite.

    .venv/bin/python scripts/check_kind_strings.py             # this checkout
    .venv/bin/python scripts/check_kind_strings.py --root DIR  # another tree of this repository

Exits 0 when nothing is found, else 1, printing ``path:line: ...`` for each comparison.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cardarena.engine.games import GAMES, ROUND_KINDS

ROOTS = ("engine", "competition", "clients", "server", "proto", "scripts")
"""The folders scanned, relative to the repository root; ``tests/`` is left out on purpose."""
REGISTRY = frozenset({"engine/games.py"})
"""The modules allowed to compare names: the registry itself."""
SKIPPED_PARTS = frozenset({"__pycache__", "node_modules", ".venv", "build"})
KIND_LIKE = re.compile(r"kind|game|type|variant", re.IGNORECASE)
"""What the name of an expression holding a game or a round kind contains."""


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    how: str
    names: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.how} {', '.join(map(repr, self.names))}"


def known_names() -> frozenset[str]:
    """Every game and round-kind name, read from the registry."""
    return frozenset(GAMES) | frozenset(ROUND_KINDS)


def _is_oneof_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "WhichOneof"
    )


def _oneof_names(body: Iterable[ast.stmt]) -> set[str]:
    """Names bound in ``body`` (nested functions and classes aside) to a ``WhichOneof`` call."""
    out: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _is_oneof_call(node.value):
                out.update(t.id for t in targets if isinstance(t, ast.Name))
        stack.extend(ast.iter_child_nodes(node))
    return out


def _subject(node: ast.AST) -> str:
    """The identifier an expression is known by: ``kind``, ``state.kind`` -> ``kind``,
    ``params["type"]`` -> ``type``, ``get_kind()`` -> ``get_kind`` ("" if none)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
        return _subject(node.value)
    if isinstance(node, ast.Call):
        return _subject(node.func)
    return ""


def _collection_names(
    node: ast.AST, names: frozenset[str], constants: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    """The known names a collection expression holds (empty when it is not one)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset", "tuple", "list")
        and len(node.args) == 1
    ):
        return _collection_names(node.args[0], names, constants)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return frozenset(
            e.value
            for e in node.elts
            if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in names
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr | ast.Add):
        left = _collection_names(node.left, names, constants)
        return left | _collection_names(node.right, names, constants)
    if isinstance(node, ast.Name | ast.Attribute):
        return constants.get(_subject(node), frozenset())
    return frozenset()


def module_constants(
    trees: Iterable[ast.Module], names: frozenset[str]
) -> dict[str, frozenset[str]]:
    """Module-level constants, across all modules, bound to a collection holding a name.

    Repeated until nothing changes, so that ``TRICK_KINDS = DODGE_KINDS | {...}`` resolves
    whatever order the modules come in."""
    bindings: list[tuple[str, ast.expr]] = []
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            bindings.extend((t.id, value) for t in targets if isinstance(t, ast.Name))
    constants: dict[str, frozenset[str]] = {}
    changed = True
    while changed:
        changed = False
        for target, value in bindings:
            found = _collection_names(value, names, constants) | constants.get(target, frozenset())
            if found and found != constants.get(target):
                constants[target] = found
                changed = True
    return constants


class _Scanner(ast.NodeVisitor):
    def __init__(
        self,
        path: str,
        tree: ast.Module,
        names: frozenset[str],
        constants: Mapping[str, frozenset[str]],
    ) -> None:
        self.path = path
        self.names = names
        self.constants = constants
        self.findings: list[Finding] = []
        self.oneof_scopes: list[set[str]] = [_oneof_names(tree.body)]

    def _name(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value if node.value in self.names else None
        return None

    def _is_kind(self, node: ast.AST) -> bool:
        """Whether ``node`` holds a game or a round kind, by its name (a oneof tag never)."""
        if _is_oneof_call(node):
            return False
        if isinstance(node, ast.Name) and any(node.id in s for s in self.oneof_scopes):
            return False
        return bool(KIND_LIKE.search(_subject(node)))

    def _flag(self, line: int, names: Iterable[str], how: str) -> None:
        self.findings.append(Finding(self.path, line, how, tuple(sorted(names))))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scoped(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._scoped(node)

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.oneof_scopes.append(_oneof_names(node.body))
        self.generic_visit(node)
        self.oneof_scopes.pop()

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            self._pair(node.lineno, op, left, right)
            left = right
        self.generic_visit(node)

    def _pair(self, line: int, op: ast.cmpop, left: ast.expr, right: ast.expr) -> None:
        if isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
            symbol = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not"}[type(op)]
            for this, other in ((left, right), (right, left)):
                name = self._name(this)
                if name is not None and self._is_kind(other):
                    self._flag(line, [name], f"{ast.unparse(other)} {symbol}")
            return
        if not isinstance(op, ast.In | ast.NotIn):
            return
        symbol = "in" if isinstance(op, ast.In) else "not in"
        name = self._name(left)
        if name is not None:
            if self._is_kind(right):
                self._flag(line, [name], f"membership in {ast.unparse(right)} of")
            return
        if not self._is_kind(left):
            return
        found = _collection_names(right, self.names, self.constants)
        if found:
            self._flag(line, found, f"{ast.unparse(left)} {symbol} {ast.unparse(right)}, holding")

    def visit_Match(self, node: ast.Match) -> None:
        if self._is_kind(node.subject):
            subject = ast.unparse(node.subject)
            for case in node.cases:
                for name, line in self._pattern_names(case.pattern):
                    self._flag(line, [name], f"match {subject}: case")
        self.generic_visit(node)

    def _pattern_names(self, pattern: ast.pattern) -> Iterator[tuple[str, int]]:
        if isinstance(pattern, ast.MatchValue):
            name = self._name(pattern.value)
            if name is not None:
                yield name, pattern.lineno
        elif isinstance(pattern, ast.MatchOr):
            for p in pattern.patterns:
                yield from self._pattern_names(p)
        elif isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
            yield from self._pattern_names(pattern.pattern)


def modules(root: Path) -> Iterator[Path]:
    """Every scanned module under ``root``, generated protobuf code aside."""
    for folder in ROOTS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root)
            if SKIPPED_PARTS & set(rel.parts) or path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            yield path


def scan(root: Path, names: frozenset[str] | None = None) -> list[Finding]:
    """Every comparison of a game or round kind to a string literal outside the registry."""
    names = known_names() if names is None else names
    trees = {
        path.relative_to(root).as_posix(): ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in modules(root)
    }
    constants = module_constants(trees.values(), names)
    findings: list[Finding] = []
    for rel, tree in trees.items():
        if rel in REGISTRY:
            continue
        scanner = _Scanner(rel, tree, names, constants)
        scanner.visit(tree)
        findings.extend(scanner.findings)
    return sorted(set(findings))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository root to scan (default: this checkout)",
    )
    args = parser.parse_args(argv)
    findings = scan(args.root.resolve())
    for finding in findings:
        print(finding)
    if findings:
        print(
            f"{len(findings)} comparison(s) of a game or round kind to a string literal "
            "outside the registry: read the answer from the registry (GAMES, round_traits)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
