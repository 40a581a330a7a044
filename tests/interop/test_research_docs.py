"""docs/research.md's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "research.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_doc_has_its_examples() -> None:
    assert len(BLOCKS) == 2


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_a_python_example_of_the_doc_runs(number: int) -> None:
    exec(compile(BLOCKS[number], f"{DOC}:block{number}", "exec"), {})
