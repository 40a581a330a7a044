"""What the parent reads of the servers while the clients play: memory, CPU and counters.

Why: the report's steadier figures come from outside the clients: server CPU per action (all
threads, from ``/proc``, summed over the server processes), the CPU of the local PostgreSQL's
processes, VmRSS, and a few Prometheus counters of the replicas (forwarded actions, group
commits). The machine is shared, so CPU per action is disturbed less by other load than
actions/s is.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .common import LOOPBACK

if TYPE_CHECKING:
    from .procs import ServerProc

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def vm_rss_kb(pids: Sequence[int]) -> int:
    """VmRSS of the processes ``pids``, summed."""
    return sum(_vm_rss_kb(pid) for pid in pids)


def _vm_rss_kb(pid: int) -> int:
    with Path(f"/proc/{pid}/status").open() as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_fds(pids: Sequence[int]) -> int:
    """Open file descriptors of the processes ``pids``, summed (each its own RLIMIT_NOFILE)."""
    return sum(sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir()) for pid in pids)


def stat_cpu(stat: str) -> float:
    """User + system CPU seconds of every thread, from the text of a ``/proc/PID/stat``."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still running (Linux's ``task/*/children``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended, or a kernel without the file
            continue
    return found


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU of every thread of the processes ``pids``, summed."""
    return sum(stat_cpu(Path(f"/proc/{pid}/stat").read_text()) for pid in pids)


def loop_sched(pids: Sequence[int]) -> tuple[float, float]:
    """Seconds the main threads of ``pids`` (each server's event loop) have spent on a core,
    and runnable but waiting in the run queue for one, summed: the kernel's own count
    (``/proc/PID/task/PID/schedstat``, in nanoseconds). A loop runnable nearly all the time is
    the server's limit, whatever its other threads wait for. NaN where the kernel keeps no
    such count."""
    on_cpu = waiting = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
        except FileNotFoundError:  # a kernel built without scheduler statistics
            return float("nan"), float("nan")
        on_cpu += int(fields[0])
        waiting += int(fields[1])
    return on_cpu / 1e9, waiting / 1e9


def postgres_cpu() -> dict[int, float]:
    """CPU seconds of every ``postgres`` process visible in /proc (the local database server:
    its backends, one per connection of the replicas, and its writers), by pid."""
    out: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            text = (entry / "stat").read_text()
            if text[text.index("(") + 1 : text.rindex(")")] == "postgres":
                out[int(entry.name)] = stat_cpu(text)
    return out


SCRAPED = {
    'cardarena_forwarded_total{method="SubmitAction"}': "forwarded",
    "cardarena_store_commit_batch_size_count": "commits",
    "cardarena_store_commit_batch_size_sum": "requests",
    "cardarena_actions_total": "actions",
    "cardarena_action_seconds_count": "timed_actions",
    "cardarena_action_seconds_sum": "action_us",
    "cardarena_store_commit_seconds_sum": "commit_us",
    'cardarena_gc_pause_seconds_count{generation="2"}': "full_gcs",
    'cardarena_gc_pause_seconds_sum{generation="2"}': "full_gc_us",
}
"""The counters read, by the name the report uses; a ``_us`` name is a sum of seconds, kept
in microseconds so that it adds up as a whole number."""


ACTION_BUCKET = 'cardarena_action_seconds_bucket{le="'
"""Each bucket of the server's own action latency is read too, as ``action_le_<seconds>``."""

STAGE = "cardarena_stage_seconds_total{"
"""With ``--stages`` (``CARDARENA_STAGE_TIMES=1``), each stage of the action
path is read too, as ``stage:<thread>:<stage>``, in microseconds."""


def handled_within(delta: Counter[str], fraction: float) -> float:
    """The smallest bucket bound (seconds) within which the servers handled ``fraction`` of
    the actions in ``delta``: an upper bound on that percentile (NaN: none timed)."""
    bounds = sorted(
        (float(key.removeprefix("action_le_")), count)
        for key, count in delta.items()
        if key.startswith("action_le_")
    )
    timed = delta["timed_actions"]
    return next((bound for bound, count in bounds if timed and count >= fraction * timed), math.nan)


def scrape(servers: Sequence[ServerProc]) -> Counter[str]:
    """The few counters the report uses, summed over the servers' Prometheus endpoints."""
    total: Counter[str] = Counter()
    for server in servers:
        if not server.metrics_port:
            continue
        url = f"http://{LOOPBACK}:{server.metrics_port}/metrics"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                text = response.read().decode()
        except OSError:
            total["failed"] += 1
            continue
        for line in text.splitlines():
            name, _, value = line.rpartition(" ")
            if name.startswith(ACTION_BUCKET):
                total[f"action_le_{name[len(ACTION_BUCKET) : -2]}"] += int(float(value))
            elif name.startswith(STAGE):
                labels = dict(re.findall(r'(\w+)="([^"]*)"', name))
                key = f"stage:{labels.get('thread')}:{labels.get('stage')}"
                total[key] += int(float(value) * 1e6)
            elif name in SCRAPED:
                key = SCRAPED[name]
                total[key] += int(float(value) * (1e6 if key.endswith("_us") else 1))
        total["scraped"] += 1
    return total


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]
