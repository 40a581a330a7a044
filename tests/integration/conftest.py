"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..serverproc import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server with a metrics port per test module, shared by the module's tests that need
    no process of their own (a test that restarts, drains or kills its server starts one)."""
    with ServerProcess(tmp_path_factory.mktemp("server") / "data", metrics=True) as running:
        yield running
