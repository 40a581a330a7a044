"""Fixtures for every folder of tests; each folder's own conftest.py adds what only it needs."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from .serverproc import ServerProcess


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[ServerProcess]:
    """``cardarena serve`` of the test's own on 127.0.0.1:0, its data (and its JSON log,
    ``stderr_path``) in ``tmp_path / "data"``; killed when the test ends."""
    with ServerProcess(tmp_path / "data") as server:
        yield server


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """For a test that runs ``serve`` in this process: ``serve`` tunes the garbage collector
    for a server (``app.tune_collector``: start-up objects frozen, full collections rare);
    the test process gets its own settings back."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
