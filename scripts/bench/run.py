"""One run: start the servers of one configuration, play for a window, measure, stop.

Why: this is the measurement itself, the same for every configuration. The client processes
(``load.py``) and the parent meet on a barrier between the setup phases, so the parent reads
the servers' VmRSS idle, once the matches are created and joined, and once every stream is
open; it then reads CPU and counters over exactly the play window, and the clients' counts are
merged into one ``RunResult``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import multiprocessing
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardarena.clients.fields import fields_of

from .bots import Stats, WorkerConfig
from .common import Kind, Pattern
from .load import worker_main
from .measure import (
    cpu_seconds,
    handled_within,
    loop_sched,
    open_fds,
    percentile,
    postgres_cpu,
    scrape,
    vm_rss_kb,
)
from .postgres import postgres_scans
from .procs import server_processes, start_py_spy

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue


@dataclasses.dataclass
class RunResult:
    kind: Kind
    actions_per_s: float
    p50_ms: float
    p99_ms: float
    p90_ms: float
    max_ms: float
    actions: int
    messages_per_action: float
    completed: int
    abandoned: int
    errors: Counter[str]
    error_details: dict[str, str]  # the first status message per key of ``errors``
    server_cpu_us_per_action: float
    server_cpu_share: float
    client_cpu_share: float
    loop_on_cpu_share: float  # of each server's event-loop thread, on a core; mean of servers
    loop_waiting_share: float  # the same, runnable and waiting for a core
    rss_idle_mb: float
    rss_per_match_kb: float
    rss_per_match_streams_kb: float
    rss_end_mb: float
    setup_seconds: float
    stream_seconds: float
    failure: str
    # From the servers' metrics (NaN when they export none): SubmitActions a replica forwarded
    # to the owner, per successful action; group commits per action; write requests per commit;
    # the mean time inside the server from an action's request to its durable acknowledgement,
    # and of one group commit; the bucket bound its p99 is within; full garbage collections in
    # the window and their pauses, summed.
    forwarded_fraction: float = float("nan")
    commits_per_action: float = float("nan")
    requests_per_commit: float = float("nan")
    server_action_ms: float = float("nan")
    commit_ms: float = float("nan")
    server_action_p99_ms: float = float("nan")
    full_gcs: float = float("nan")
    full_gc_ms: float = float("nan")
    # Summed over every server process (replicas), and what PostgreSQL's processes spent.
    servers: int = 1
    postgres_cpu_us_per_action: float = 0.0
    postgres_cpu_share: float = 0.0
    # Table reads (index and sequential scans, from pg_stat_user_tables) in the run's schema
    # per action: the owner's checks inside each append, and the forwarding replicas' and the
    # followers' lookups and catch-up reads. Other users of the database do not count.
    postgres_scans_per_action: float = float("nan")
    # Paced runs (--rate): the actions/s asked for, and send-to-acknowledgement percentiles
    # beside the scheduled-to-acknowledgement ones above.
    rate_per_match: float = 0.0
    target_per_s: float = 0.0
    service_p50_ms: float = float("nan")
    service_p99_ms: float = float("nan")
    # Open files once every stream is open: the servers' (summed), the busiest client's.
    server_fds: int = 0
    client_fds: int = 0
    # With --stages (CARDARENA_STAGE_TIMES=1): microseconds per action of each
    # stage the servers time, by ``thread:stage`` (wall time; empty when not timed), and the
    # event loop's time on a core and runnable but waiting for one, per action.
    stage_us: dict[str, float] = dataclasses.field(default_factory=dict)
    loop_on_cpu_us: float = float("nan")
    loop_waiting_us: float = float("nan")
    window_us: float = float("nan")

    @property
    def achieved_fraction(self) -> float:
        """Paced: the actions/s achieved as a fraction of those asked for (NaN: closed loop)."""
        return self.actions_per_s / self.target_per_s if self.target_per_s else float("nan")


def client_configs(
    args: argparse.Namespace,
    kind: Kind,
    addresses: tuple[str, ...],
    window: float,
    repeat: int,
    pattern: Pattern,
    rate: float,
) -> list[WorkerConfig]:
    """One config per client process; the matches shared out as evenly as they go."""
    shares = [
        args.matches // args.client_procs + (i < args.matches % args.client_procs)
        for i in range(args.client_procs)
    ]
    return [
        WorkerConfig(
            **fields_of(args, "game", "players", "channels", "setup_concurrency", "setup_timeout"),
            addresses=addresses,
            kind=kind,
            worker=i,
            slots=share,
            window=window,
            pattern=pattern,
            seed=args.seed * 1000 + repeat,
            rate=rate,
            batched=not args.unbatched,
        )
        for i, share in enumerate(shares)
    ]


def run_once(
    kind: Kind,
    args: argparse.Namespace,
    window: float,
    repeat: int,
    match_actions: int,
    count: int = 1,
    store: str | None = None,
    *,
    pattern: Pattern | None = None,
    rate: float = 0.0,
) -> RunResult:
    """One run of ``count`` servers of ``kind``: set up, play ``window`` seconds, measure.

    ``pattern`` (default ``--pattern``) and ``rate`` (actions/s per match; 0: closed loop) say
    how the clients play."""
    pattern = pattern or args.pattern
    with (
        tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as tmp,
        server_processes(kind, Path(tmp), match_actions, count, store) as servers,
    ):
        pids = [server.process.pid for server in servers]
        ctx = multiprocessing.get_context("spawn")
        barrier = ctx.Barrier(args.client_procs + 1)
        results: Queue[dict[str, Any]] = ctx.Queue()
        addresses = tuple(server.address for server in servers)
        workers: list[BaseProcess] = [
            ctx.Process(target=worker_main, args=(config, barrier, results), daemon=True)
            for config in client_configs(args, kind, addresses, window, repeat, pattern, rate)
        ]
        rss_idle = vm_rss_kb(pids)
        profiler: subprocess.Popen[bytes] | None = None
        try:
            for worker in workers:
                worker.start()
            barrier.wait(args.setup_timeout)
            rss_created = vm_rss_kb(pids)
            barrier.wait(args.setup_timeout)
            barrier.wait(args.setup_timeout)
            rss_streams = vm_rss_kb(pids)
            server_fds = open_fds(pids)
            metrics_start = scrape(servers)
            scans_start = postgres_scans(store)
            pg_start = postgres_cpu()
            cpu_start = cpu_seconds(pids)
            loop_start = loop_sched(pids)
            if args.py_spy and kind == "durable" and repeat == 0:
                profiler = start_py_spy(args.py_spy, pids[0], window)
            barrier.wait(args.setup_timeout)
            started = time.monotonic()
            time.sleep(window)
            cpu_used = cpu_seconds(pids) - cpu_start
            loop_end = loop_sched(pids)
            pg_end = postgres_cpu()
            elapsed = time.monotonic() - started
            metrics_end = scrape(servers)
            scans_end = postgres_scans(store)
            rss_end = vm_rss_kb(pids)
            gathered = [results.get(timeout=args.setup_timeout + 60) for _ in workers]
        except Exception as error:
            fatal = [r["fatal"] for r in drain(results) if "fatal" in r]
            raise RuntimeError(f"the {kind} run failed: {error!r} {fatal}") from error
        finally:
            if profiler is not None:
                profiler.wait(window + 60)
            for worker in workers:
                worker.join(30)
                if worker.is_alive():
                    worker.kill()
        fatal = [r["fatal"] for r in gathered if "fatal" in r]
        if fatal:
            raise RuntimeError(f"a client process of the {kind} run failed: {fatal}")
    merged, client_cpu = merge(gathered)
    latencies = sorted(merged.latencies)
    service = sorted(merged.service)
    actions = max(merged.actions, 1)
    # A backend that ended in the window is lost; one that started counts from zero.
    pg_used = sum(seconds - pg_start.get(pid, 0.0) for pid, seconds in pg_end.items())
    metered = [s for s in servers if s.metrics_port]
    complete = bool(metered) and all(
        m["scraped"] == len(metered) for m in (metrics_start, metrics_end)
    )
    delta = metrics_end - metrics_start if complete else Counter[str]()
    nan = float("nan")
    return RunResult(
        kind=kind,
        actions_per_s=merged.actions / elapsed,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        p90_ms=percentile(latencies, 0.90) * 1000,
        max_ms=percentile(latencies, 1.0) * 1000,
        actions=merged.actions,
        messages_per_action=merged.messages / args.players / actions,
        completed=merged.completed,
        abandoned=merged.abandoned,
        errors=merged.errors,
        error_details=merged.details,
        server_cpu_us_per_action=cpu_used / actions * 1e6,
        server_cpu_share=cpu_used / elapsed,
        client_cpu_share=client_cpu / elapsed,
        loop_on_cpu_share=(loop_end[0] - loop_start[0]) / elapsed / len(pids),
        loop_waiting_share=(loop_end[1] - loop_start[1]) / elapsed / len(pids),
        rss_idle_mb=rss_idle / 1024,
        rss_per_match_kb=(rss_created - rss_idle) / args.matches,
        rss_per_match_streams_kb=(rss_streams - rss_idle) / args.matches,
        rss_end_mb=rss_end / 1024,
        setup_seconds=merged.create_seconds,
        stream_seconds=merged.stream_seconds,
        failure=merged.failure,
        servers=len(servers),
        postgres_cpu_us_per_action=pg_used / actions * 1e6,
        postgres_cpu_share=pg_used / elapsed,
        forwarded_fraction=delta["forwarded"] / actions if complete else nan,
        commits_per_action=delta["commits"] / actions if complete else nan,
        requests_per_commit=delta["requests"] / max(delta["commits"], 1) if complete else nan,
        postgres_scans_per_action=(
            nan if scans_start is None or scans_end is None else (scans_end - scans_start) / actions
        ),
        rate_per_match=rate,
        target_per_s=rate * args.matches,
        service_p50_ms=percentile(service, 0.50) * 1000,
        service_p99_ms=percentile(service, 0.99) * 1000,
        server_fds=server_fds,
        client_fds=merged.fds,
        server_action_ms=(
            delta["action_us"] / 1000 / delta["timed_actions"]
            if complete and delta["timed_actions"]
            else nan
        ),
        commit_ms=delta["commit_us"] / 1000 / delta["commits"]
        if complete and delta["commits"]
        else nan,
        server_action_p99_ms=handled_within(delta, 0.99) * 1000 if complete else nan,
        full_gcs=delta["full_gcs"] if complete else nan,
        full_gc_ms=delta["full_gc_us"] / 1000 if complete else nan,
        stage_us={
            key.removeprefix("stage:"): value / actions
            for key, value in delta.items()
            if key.startswith("stage:")
        },
        loop_on_cpu_us=(loop_end[0] - loop_start[0]) / len(pids) / actions * 1e6,
        loop_waiting_us=(loop_end[1] - loop_start[1]) / len(pids) / actions * 1e6,
        window_us=elapsed / actions * 1e6,
    )


def merge(gathered: Sequence[dict[str, Any]]) -> tuple[Stats, float]:
    """The client processes' stats as one, and their CPU seconds in the window, summed."""
    merged = Stats()
    client_cpu = 0.0
    for part in gathered:
        merged.actions += part["actions"]
        merged.messages += part["messages"]
        merged.latencies.extend(part["latencies"])
        merged.service.extend(part["service"])
        merged.fds = max(merged.fds, part["fds"])
        merged.errors.update(part["errors"])
        for key, text in part["details"].items():
            merged.details.setdefault(key, text)
        merged.completed += part["completed"]
        merged.abandoned += part["abandoned"]
        merged.create_seconds = max(merged.create_seconds, part["create_seconds"])
        merged.stream_seconds = max(merged.stream_seconds, part["stream_seconds"])
        merged.failure = merged.failure or part["failure"]
        client_cpu += part["cpu_seconds"]
    return merged, client_cpu


def drain(results: Queue[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with contextlib.suppress(Exception):
        while True:
            out.append(results.get(timeout=0.5))
    return out
