"""The printed tables: the SQLite server next to the no-op ceiling, and the replica comparison.

Why apart from the runs: what is measured and how it is shown change for different reasons.
Each figure is the median over ``--repeats`` runs; errors, the first divergence and (with
repeats) each run's actions/s follow the table, per configuration.
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence

from cardarena.server.app import GRPC_OPTIONS

from .common import Configuration
from .run import RunResult

TARGET_RATIO = 0.80
"""Issue 16: durable ÷ no-op actions/s of at least 0.80, for the unary pattern and for Play."""

PATTERNS = {
    "turns": "one StreamEvents stream per seat for the whole match; act on each YourTurn "
    "(random legal action, expected_seq = its seq)",
    "play": "one bidirectional Play stream per seat for the whole match; a PlayAction on each "
    "YourTurn, answered by an ActionResult on the same stream",
    "replica": "one StreamEvents stream per seat for the whole match; turn and legal "
    "actions from a client-side engine replica (the bench chose each seed)",
    "resnapshot": "one stream per seat, reopened for a fresh snapshot before every action; "
    "random choice among snapshot.legal_actions",
}


PENDING = dict(GRPC_OPTIONS)["grpc.server.max_pending_requests"]
PENDING_LIMIT_NOTE = (
    "CANCELLED without a message: the server's gRPC core refused calls that waited for its "
    f"event loop to take them up, beyond the {PENDING:,} it holds (serve --max-pending-calls, "
    "server/app.py), or that waited there 30 s; a closed loop of more matches keeps more "
    "calls in flight"
)
"""Why a benchmark's calls can come back CANCELLED with no message: found by driving a slow
grpc.aio servicer with more concurrent calls than the bound (tests/server/test_pending_calls.py)."""


def nofile() -> int:
    """The soft open-file limit this process (and so every process it starts) runs under."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def median_of(runs: Sequence[RunResult], name: str) -> float:
    return float(statistics.median(getattr(r, name) for r in runs))


def medians_note(args: argparse.Namespace) -> str:
    return " (medians)" if args.repeats > 1 else ""


def cell(value: float, digits: int, width: int, suffix: str = "") -> str:
    text = "-" if math.isnan(value) else f"{value:,.{digits}f}{suffix}"  # NaN: not measured
    return f"{text:>{width}}"


def print_outcome(label: str, results: Sequence[RunResult], *, say_none: bool) -> None:
    """The errors of ``label``'s runs (``none`` if there were none and ``say_none``), and the
    first divergence the clients saw."""
    errors: Counter[str] = Counter()
    for result in results:
        errors.update(result.errors)
    if errors or say_none:
        text = ", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) or "none"
        print(f"errors ({label}): {text}")
    details: dict[str, str] = {}
    for result in results:
        for key, message in result.error_details.items():
            details.setdefault(key, message)
    for key, message in sorted(details.items()):
        print(f"  first {key}: {message[:160]!r}")
    if any(k.endswith(" CANCELLED") and m in ("", "CANCELLED") for k, m in details.items()):
        print(f"  {PENDING_LIMIT_NOTE}")
    failures = [r.failure for r in results if r.failure]
    if failures:
        print(f"first divergence ({label}): {failures[0]}")


def print_per_run(label: str, results: Sequence[RunResult]) -> None:
    each = ", ".join(f"{r.actions_per_s:,.0f}" for r in results)
    print(f"actions/s per run ({label}): {each}")


FIGURES: dict[str, tuple[str, int]] = {
    # A RunResult field: its label ({latency} names what a table's latency counts) and decimals.
    "target_per_s": ("actions/s asked", 0),
    "actions_per_s": ("player actions/s", 0),
    "achieved_fraction": ("achieved / asked", 2),
    "p50_ms": ("{latency} p50 (ms)", 2),
    "p90_ms": ("{latency} p90 (ms)", 2),
    "p99_ms": ("{latency} p99 (ms)", 2),
    "max_ms": ("{latency} max (ms)", 1),
    "service_p50_ms": ("send to ack p50 (ms)", 2),
    "service_p99_ms": ("send to ack p99 (ms)", 2),
    "server_action_ms": ("in the server: action mean (ms)", 2),
    "server_action_p99_ms": ("in the server: action p99 at most (ms)", 0),
    "commit_ms": ("in the server: commit mean (ms)", 2),
    "commits_per_action": ("group commits per action", 2),
    "full_gcs": ("full collections in the window", 0),
    "full_gc_ms": ("full collections' pauses (ms, summed)", 0),
    "messages_per_action": ("stream messages per action per seat", 2),
    "completed": ("matches completed", 0),
    "abandoned": ("matches abandoned", 0),
    "server_cpu_us_per_action": ("server CPU per action (us)", 0),
    "server_cpu_share": ("server CPU (cores busy)", 2),
    "client_cpu_share": ("client CPU (cores busy)", 2),
    "loop_on_cpu_share": ("server event loop on a core (share)", 2),
    "loop_waiting_share": ("server event loop waiting for a core (share)", 2),
    "rss_idle_mb": ("server RSS idle (MB)", 1),
    "rss_per_match_kb": ("RSS per hosted match (KB)", 1),
    "rss_per_match_streams_kb": ("RSS per match + its streams (KB)", 1),
    "rss_end_mb": ("server RSS at end (MB)", 1),
    "fds": ("open files: server / busiest client", 0),  # two RunResult fields in one cell
    "setup_seconds": ("setup: create+join (s)", 1),
    "stream_seconds": ("setup: open streams (s)", 1),
}
"""Every figure a report's table may show, each labelled once; a table is a list of names."""

LATENCY = ("p50_ms", "p90_ms", "p99_ms", "max_ms")
SERVER_COST = (
    "server_action_ms",
    "server_action_p99_ms",
    "commit_ms",
    "commits_per_action",
    "full_gcs",
    "full_gc_ms",
)
"""What an action costs inside the server: in every table, closed loop or paced."""
CPU = (
    "server_cpu_us_per_action",
    "server_cpu_share",
    "client_cpu_share",
    "loop_on_cpu_share",
    "loop_waiting_share",
)
"""Where the CPU went: in every table, closed loop or paced."""

RSS = ("rss_idle_mb", "rss_per_match_kb", "rss_per_match_streams_kb", "rss_end_mb")
SETUP = ("fds", "setup_seconds", "stream_seconds")
OUTCOME = ("messages_per_action", "completed", "abandoned")
CLOSED_LOOP = ("actions_per_s", *LATENCY, *SERVER_COST, *OUTCOME, *CPU, *RSS, *SETUP)
"""The closed loop's table, beside the no-op ceiling."""

COLUMN = {"durable": "durable (SQLite)", "noop": "no-op ceiling", "postgres": "PostgreSQL"}
ACKNOWLEDGED = {
    "turns": "SubmitAction sent to its answer",
    "play": "PlayAction written to its ActionResult",
    "replica": "SubmitAction sent to its answer",
    "resnapshot": "SubmitAction sent to its answer",
}


def print_table(
    args: argparse.Namespace,
    plan: Sequence[Configuration],
    runs: Mapping[str, Sequence[RunResult]],
    rows: Sequence[str] = CLOSED_LOOP,
    latency: str = "action latency",
) -> None:
    """One column per configuration of ``plan``, one row per figure (medians)."""
    heads = [COLUMN[c.kind] + (f" {c.pattern}" if len(args.patterns) > 1 else "") for c in plan]
    width = max(18, *(len(h) + 2 for h in heads))
    labels = {name: FIGURES[name][0].format(latency=latency) for name in rows}
    first = max(len(label) for label in labels.values()) + 2
    print(f"{'':{first}}" + "".join(f"{h:>{width}}" for h in heads))
    for name in rows:
        digits = FIGURES[name][1]
        cells = []
        for config in plan:
            results = runs[config.label]
            if name == "fds":
                server = statistics.median(r.server_fds for r in results)
                client = statistics.median(r.client_fds for r in results)
                cells.append(f"{server:,.0f} / {client:,.0f}")
            else:
                cells.append(cell(median_of(results, name), digits, 0))
        print(f"{labels[name]:{first}}" + "".join(f"{c:>{width}}" for c in cells))


def report_noop(
    args: argparse.Namespace,
    plan: Sequence[Configuration],
    runs: Mapping[str, Sequence[RunResult]],
    window: float,
) -> None:
    """The default comparison: the ``durable`` and the ``noop`` server, per pattern."""
    print(
        f"cardarena server load: {args.game}, {args.players} players, {args.matches} concurrent "
        f"matches, {args.client_procs} client process(es) x {args.channels} channels, "
        f"{window:.1f} s per run, {args.repeats} repeat(s)" + medians_note(args)
    )
    print(f"open-file limit (RLIMIT_NOFILE, soft) of every process: {nofile()}")
    for pattern in args.patterns:
        print(f"pattern {pattern}: {PATTERNS[pattern]}; latency: {ACKNOWLEDGED[pattern]}")
    print_table(args, plan, runs)
    for config in plan:
        print_outcome(config.label, runs[config.label], say_none=True)
    if args.repeats > 1:
        for config in plan:
            print_per_run(config.label, runs[config.label])
    for pattern in args.patterns:
        durable, noop = runs[f"durable {pattern}"], runs[f"noop {pattern}"]
        ratio = median_of(durable, "actions_per_s") / max(median_of(noop, "actions_per_s"), 1e-9)
        verdict = "meets" if ratio >= TARGET_RATIO else "below"
        # Less sensitive to other load on the machine: what each action costs the server's CPU.
        cost = median_of(noop, "server_cpu_us_per_action") / max(
            median_of(durable, "server_cpu_us_per_action"), 1e-9
        )
        print(
            f"{pattern}: durable / no-op actions/s {ratio:.2f} ({verdict} the issue's target of "
            f"{TARGET_RATIO:.2f}); no-op / durable server CPU per action {cost:.2f} (the ratio "
            "if both were CPU-bound)"
        )


def report_replicas(
    args: argparse.Namespace,
    configs: Sequence[Configuration],
    runs: Mapping[str, Sequence[RunResult]],
    window: float,
) -> None:
    print(
        f"cardarena replicas on one PostgreSQL vs the SQLite single process: {args.game}, "
        f"{args.players} players, {args.matches} concurrent matches, {args.client_procs} client "
        f"process(es) x {args.channels} channels per server, {window:.1f} s per run, "
        f"{args.repeats} repeat(s)" + medians_note(args)
    )
    print(
        "clients: each match is created on a random replica (which owns it); each seat joins, "
        "streams and submits through a random replica, so with N replicas about (N-1)/N of the "
        "actions are forwarded to the owner"
    )
    base = runs[configs[0].label]
    base_rate = median_of(base, "actions_per_s")
    base_cpu = median_of(base, "server_cpu_us_per_action")
    base_all = base_cpu + median_of(base, "postgres_cpu_us_per_action")
    print(
        f"{'configuration':24}{'actions/s':>10}{'p50 ms':>9}{'p99 ms':>10}{'server us/act':>15}"
        f"{'x actions/s':>13}{'x server CPU':>14}{'errors':>8}"
    )
    for config in configs:
        results = runs[config.label]
        failed = sum(sum(r.errors.values()) for r in results)
        print(
            f"{config.label:24}{cell(median_of(results, 'actions_per_s'), 0, 10)}"
            f"{cell(median_of(results, 'p50_ms'), 2, 9)}{cell(median_of(results, 'p99_ms'), 2, 10)}"
            f"{cell(median_of(results, 'server_cpu_us_per_action'), 0, 15)}"
            f"{cell(median_of(results, 'actions_per_s') / base_rate, 2, 13)}"
            f"{cell(median_of(results, 'server_cpu_us_per_action') / base_cpu, 2, 14)}"
            f"{failed:>8}"
        )
    print(
        "where the CPU goes (server = all replica processes; PG = every postgres process on "
        "this machine, so other users of the database show in it: see the SQLite row; "
        "PG reads = table scans in the run's schema)"
    )
    print(
        f"{'configuration':24}{'PG us/act':>10}{'srv+PG us/act':>14}{'x srv+PG':>10}"
        f"{'cores: srv':>11}{'PG':>6}{'clients':>8}{'forwarded':>10}{'commits/act':>12}"
        f"{'req/commit':>11}{'PG reads/act':>13}{'RSS MB':>8}"
    )
    for config in configs:
        results = runs[config.label]
        pg = median_of(results, "postgres_cpu_us_per_action")
        both = statistics.median(
            r.server_cpu_us_per_action + r.postgres_cpu_us_per_action for r in results
        )
        print(
            f"{config.label:24}{cell(pg, 0, 10)}{cell(both, 0, 14)}"
            f"{cell(both / base_all, 2, 10)}"
            f"{cell(median_of(results, 'server_cpu_share'), 2, 11)}"
            f"{cell(median_of(results, 'postgres_cpu_share'), 2, 6)}"
            f"{cell(median_of(results, 'client_cpu_share'), 2, 8)}"
            f"{cell(median_of(results, 'forwarded_fraction') * 100, 0, 10, '%')}"
            f"{cell(median_of(results, 'commits_per_action'), 2, 12)}"
            f"{cell(median_of(results, 'requests_per_commit'), 1, 11)}"
            f"{cell(median_of(results, 'postgres_scans_per_action'), 2, 13)}"
            f"{cell(median_of(results, 'rss_end_mb'), 0, 8)}"
        )
    expected = ", ".join(
        f"{c.count} replica(s) {100 * (c.count - 1) / c.count:.0f}%"
        for c in configs
        if c.kind == "postgres"
    )
    print(f"forwarded SubmitActions expected: {expected}")
    for config in configs:
        results = runs[config.label]
        print_outcome(config.label, results, say_none=False)
        if args.repeats > 1:
            print_per_run(config.label, results)
