"""No code outside the registry compares a game or round kind to a string: the scan, run here.

``scripts/check_kind_strings.py`` is the AST scan (its docstring says what it flags and why);
this runs it over the checkout, so that the suite fails naming the file and line of any new
``kind == "fan_tan"``, and plants violations in a scratch tree, so that a scan that finds
nothing because it reads nothing cannot pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.check_kind_strings import ROOTS, Finding, main, modules, scan

ROOT = Path(__file__).resolve().parents[2]

PLANTED = """\
from cardarena.engine.games import kind_traits

SOLITAIRE_KINDS = ("fan_tan", "hand")


def branchy(kind: str, state: object, params: dict[str, str], msg: object) -> int:
    if kind == "fan_tan":
        return 1
    if "triathlon" != state.game:
        return 2
    if params["type"] in {"trumps", "grand"}:
        return 3
    if kind in SOLITAIRE_KINDS:
        return 4
    match state.kind:
        case "queens" | "clubs":
            return 5
    which = msg.WhichOneof("kind")
    if which == "deal":
        return 6
    if state.what == "deal":
        return 7
    return 0
"""
"""A module with five kinds of comparison the scan flags (lines 7, 9, 11, 13, 16) and three
it must leave alone: a protobuf oneof tag (line 19), a word that is only a round kind's name
(line 21), and the registry's own import."""


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_no_game_or_round_kind_is_compared_to_a_string_outside_the_registry() -> None:
    findings = scan(ROOT)
    assert not findings, (
        "compare through the registry (GAMES, round_traits) instead:\n"
        + "\n".join(map(str, findings))
    )


def test_the_scan_reads_every_package_of_the_checkout() -> None:
    scanned = {path.relative_to(ROOT).as_posix() for path in modules(ROOT)}
    for folder in ROOTS:
        assert any(rel.startswith(f"{folder}/") for rel in scanned), folder
    assert {"engine/match.py", "engine/determinize.py", "proto/cardarena/v1/codec.py"} <= scanned
    assert not any(rel.endswith(("_pb2.py", "_pb2_grpc.py")) for rel in scanned)


def test_a_planted_comparison_is_found_by_file_and_line(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"clients/branchy.py": PLANTED, "engine/games.py": PLANTED})
    findings = scan(root)
    assert [(f.path, f.line) for f in findings] == [
        ("clients/branchy.py", line) for line in (7, 9, 11, 13, 16, 16)
    ]
    assert [f.names for f in findings] == [
        ("fan_tan",),
        ("triathlon",),
        ("grand", "trumps"),
        ("fan_tan", "hand"),
        ("clubs",),
        ("queens",),
    ]


def test_a_constant_imported_from_another_module_counts(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "engine/kinds.py": 'DODGE = {"queens"}\nTRICKS = DODGE | {"trumps"}\n',
            "server/uses.py": "from x import TRICKS\n\n\ndef f(kind):\n    return kind in TRICKS\n",
        },
    )
    assert scan(root) == [
        Finding("server/uses.py", 5, "kind in TRICKS, holding", ("queens", "trumps"))
    ]


def test_the_command_exits_1_printing_path_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _tree(tmp_path, {"scripts/bad.py": 'def f(game):\n    return game == "triathlon"\n'})
    assert main(["--root", str(root)]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["scripts/bad.py:2: game == 'triathlon'"]
    assert "1 comparison(s)" in err
    (root / "scripts/bad.py").write_text("def f(game):\n    return game.name\n", encoding="utf-8")
    assert main(["--root", str(root)]) == 0
