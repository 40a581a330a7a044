"""Prometheus metrics of the server (documented in docs/server.md, "Metrics")."""

from __future__ import annotations

import gc
import os
import time
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily

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


# -- where an action's time goes (``CARDARENA_STAGE_TIMES=1``) ----------------------------------

STAGE_TIMES: Final = os.environ.get("CARDARENA_STAGE_TIMES", "") not in ("", "0")
"""Whether the action path times its stages (read once, at import). Off, each marked point
costs a test of this constant; on, a read of the thread's CPU clock (about 0.3 us).
``bench_server.py --stages`` turns it on."""


class Laps:
    """CPU time of one thread's consecutive stretches of work, each added to a named stage.

    Why laps and not timers: the stages of an action run one after another, each synchronous
    on the event loop (or on the writer thread), so one clock per thread, read once at each
    boundary, times them all; :meth:`begin` marks the start of a stretch wherever a task
    resumes (another task may have run since the last lap), :meth:`lap` ends one. Why the
    thread's CPU clock and not the wall clock: on a shared machine a stretch's wall time is
    mostly the time its thread waited for a core or for the GIL, which says nothing about the
    stage."""

    __slots__ = ("laps", "mark", "ns")

    def __init__(self) -> None:
        self.mark = 0
        self.laps = 0
        self.ns: dict[str, int] = {}

    def begin(self) -> None:
        self.mark = time.thread_time_ns()

    def lap(self, stage: str) -> None:
        now = time.thread_time_ns()
        self.ns[stage] = self.ns.get(stage, 0) + now - self.mark
        self.mark = now
        self.laps += 1

    def add(self, stage: str, ns: int) -> None:
        self.ns[stage] = self.ns.get(stage, 0) + ns


LOOP = Laps()
"""The event loop's stages (and ``loop idle``: its time waiting in the selector)."""
WRITER = Laps()
"""The store's writer thread's stages (and ``writer cpu``: its CPU time, by batch)."""


def begin() -> None:
    LOOP.begin()


def lap(stage: str) -> None:
    LOOP.lap(stage)


def watch_idle(loop: Any) -> None:
    """Count the wall time ``loop`` waits in its selector as ``loop idle`` (once per loop): a
    loop that is never idle is the server's limit."""
    selector = getattr(loop, "_selector", None)
    if selector is None or getattr(selector, "_cardarena_timed", False):
        return
    select = selector.select

    def timed(timeout: float | None = None) -> Any:
        started = time.perf_counter_ns()
        try:
            return select(timeout)
        finally:
            LOOP.add("loop idle", time.perf_counter_ns() - started)

    selector.select = timed
    selector._cardarena_timed = True


def _clock_read_ns() -> float:
    """What one lap costs the thread (mostly the read of its CPU clock, a system call): the
    stages include it, about once per stretch, and the report says how much it adds."""
    laps = Laps()
    laps.begin()
    started = time.thread_time_ns()
    for _ in range(2000):
        laps.lap("calibrating")
    return (time.thread_time_ns() - started) / 2000


class _StageCollector:
    """Exports the stages' sums as ``cardarena_stage_seconds_total{thread, stage}``, read at
    scrape time: nothing is done per action but the additions."""

    def collect(self) -> Any:
        family = CounterMetricFamily(
            "cardarena_stage_seconds",
            "CPU time of each stage of the action path, by thread (CARDARENA_STAGE_TIMES=1)",
            labels=["thread", "stage"],
        )
        for thread, laps in (("loop", LOOP), ("writer", WRITER)):
            for stage, ns in sorted(laps.ns.items()):
                family.add_metric([thread, stage], ns / 1e9)
            family.add_metric([thread, "clock reads"], laps.laps * self.clock_ns / 1e9)
        yield family

    def __init__(self) -> None:
        self.clock_ns = _clock_read_ns()


if STAGE_TIMES:
    REGISTRY.register(_StageCollector())
