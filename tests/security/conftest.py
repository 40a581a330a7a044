"""Fixtures of the security tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .support import fast_dir


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A server's data directory, in memory where the machine has /dev/shm (see ``fast_dir``)."""
    with fast_dir(tmp_path) as path:
        yield path
