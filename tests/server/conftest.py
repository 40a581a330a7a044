"""Fixtures of the server's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..stores import BACKENDS, store_url


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store of each kind (SQLite in ``tmp_path``, PostgreSQL in a schema of
    its own): a test taking it runs once per backend."""
    with store_url(request.param, tmp_path) as fresh:
        yield fresh
