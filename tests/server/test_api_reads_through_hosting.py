"""The api reads what the store holds through the hosting layer, never from the store itself.

Why: a read that reaches past the arena or a hosted match into the store would skip what they
add (the match in memory under its lock, the replication policy's catching up, the signing
key), and the data path would double back (api → store → hosting). The store's errors and
records are still the api's to name: only reaching a store object is refused.
"""

from __future__ import annotations

import ast
from pathlib import Path

from cardarena.server import api

API = Path(api.__file__).parent


def store_reads(source: str) -> list[int]:
    """The lines of ``source`` that use an attribute named ``store`` (``arena.store``,
    ``hosted.store``, ``self.tournaments.arena.store``, ...)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "store"
    )


def test_no_api_module_reaches_the_store() -> None:
    found = {
        str(path.relative_to(API)): lines
        for path in sorted(API.rglob("*.py"))
        if (lines := store_reads(path.read_text()))
    }
    assert found == {}, f"read through the arena or the hosted match instead: {found}"


def test_the_check_sees_a_store_read() -> None:
    assert store_reads("async def f(arena):\n    return await arena.store.get_match('m')\n") == [2]
    assert store_reads("from ..store import StoreError\nx = hosted.read_log()\n") == []
