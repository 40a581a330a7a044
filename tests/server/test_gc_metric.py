"""Garbage collections are timed into cardarena_gc_pause_seconds, by generation."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from cardarena.server import metrics


def count(generation: int) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "cardarena_gc_pause_seconds_count", {"generation": str(generation)}
    )
    return value or 0.0


@pytest.fixture
def timed() -> Iterator[None]:
    installed = list(gc.callbacks)
    metrics.time_collections()
    metrics.time_collections()  # once per process, however often asked
    yield
    gc.callbacks[:] = installed


@pytest.mark.usefixtures("timed")
def test_every_collection_is_timed_once_by_its_generation() -> None:
    assert gc.callbacks.count(metrics._time_collection) == 1
    before = [count(generation) for generation in range(3)]
    gc.collect(0)
    gc.collect()
    after = [count(generation) for generation in range(3)]
    assert after[0] >= before[0] + 1
    assert after[2] >= before[2] + 1
    paused = metrics.REGISTRY.get_sample_value(
        "cardarena_gc_pause_seconds_sum", {"generation": "2"}
    )
    assert paused is not None and paused > 0
