"""Prometheus metrics of the server (documented in docs/server.md, "Metrics")."""

from __future__ import annotations

import gc
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

MATCHES = Gauge("cardarena_matches", "Hosted matches by state", ["state"], registry=REGISTRY)
ACTIONS = Counter(
    "cardarena_actions_total", "Actions applied (timeouts included)", registry=REGISTRY
)
ACTION_SECONDS = Histogram(
    "cardarena_action_seconds",
    "SubmitAction latency, from request to durable acknowledgement",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=REGISTRY,
)
COMMIT_SECONDS = Histogram(
    "cardarena_store_commit_seconds",
    "Event store group-commit latency",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25),
    registry=REGISTRY,
)
COMMIT_BATCH = Histogram(
    "cardarena_store_commit_batch_size",
    "Write requests per group commit",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
    registry=REGISTRY,
)
SUBSCRIBERS = Gauge("cardarena_stream_subscribers", "Open event streams", registry=REGISTRY)
ERRORS = Counter(
    "cardarena_rpc_errors_total", "Refused RPCs by status code", ["code"], registry=REGISTRY
)


def observe_commit(batch_size: int, seconds: float) -> None:
    COMMIT_BATCH.observe(batch_size)
    COMMIT_SECONDS.observe(seconds)


FORWARDED = Counter(
    "cardarena_forwarded_total",
    "Actions and joins forwarded to the replica that owns the match, by method",
    ["method"],
    registry=REGISTRY,
)
LEASES = Gauge(
    "cardarena_leases_held", "Matches this replica owns (replicas only)", registry=REGISTRY
)
GC_PAUSE_SECONDS = Histogram(
    "cardarena_gc_pause_seconds",
    "Garbage collections by generation, timed: the whole process stands still for each",
    ["generation"],
    buckets=(0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
_gc_pauses = [GC_PAUSE_SECONDS.labels(str(generation)) for generation in range(3)]
_gc_started = [0.0]


def _time_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        _gc_pauses[info["generation"]].observe(time.perf_counter() - _gc_started[0])


def time_collections() -> None:
    """Time every garbage collection from now on (once per process, however often called).

    Why: a full collection walks every tracked object, so its pause grows with the matches
    hosted; an operator (and the benchmark) can see it beside the action latency it adds to."""
    if _time_collection not in gc.callbacks:
        gc.callbacks.append(_time_collection)
