"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
FILES = re.compile(r"### Your first bot.*?(?=\n## |\n\*\*)", flags=re.DOTALL)
"""The first bot's section holds a file to save, not an example: tests/clients/
test_readme_bots.py runs it as the section says."""
BLOCKS = re.findall(r"```python\n(.*?)```", FILES.sub("", README.read_text()), flags=re.DOTALL)


def test_readme_has_examples() -> None:
    assert BLOCKS


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(source, str(README), "exec"), {})
    assert capsys.readouterr().out
