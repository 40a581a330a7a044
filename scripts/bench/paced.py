"""Paced, open-loop load (``--rate``): action latency at a set rate, and at half the capacity.

Why: the closed loop measures capacity, but its latency is the length of the queue it builds
itself (each match acts the moment its last answer came), and a slow answer delays the next
request and so hides itself (coordinated omission). The issue's target is a p99 under 50 ms
at half the measured capacity, which only a load that keeps its schedule can show. With a rate
each match acts on a fixed schedule (``pacing.py``): one action every 1/R seconds from a random
phase, whatever the answers, and each latency runs from the action's scheduled time to its
acknowledgement (SubmitAction's answer, or Play's ActionResult).

Two plans, both with the no-op ceiling paced at the same rate as the peer of the SQLite server:

* ``--rate R``: every match acts R times a second.
* ``--rate half``: per repeat and pattern, first a closed-loop run of the SQLite server at
  ``--matches`` (its capacity C, measured in this run), then both servers paced at C / 2 over
  the matches; the report prints C beside the paced figures and achieved ÷ C.

The report: actions/s asked and achieved, latency p50/p90/p99/max (scheduled to acknowledged)
and p50/p99 of send to acknowledgement, server CPU, errors; ratios: achieved ÷ asked, durable
÷ no-op p99, and with ``half`` achieved ÷ capacity.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Mapping, Sequence

from .common import Configuration
from .compare import noop_plan, run_all, run_config, say, window_of
from .report import (
    ACKNOWLEDGED,
    CPU,
    LATENCY,
    PATTERNS,
    SERVER_COST,
    median_of,
    print_outcome,
    print_table,
)
from .run import RunResult, run_once

P99_TARGET_MS = 50.0
"""Issue 16: p99 action latency at half the measured capacity under 50 ms."""

PACED = (
    "target_per_s",
    "actions_per_s",
    "achieved_fraction",
    *LATENCY,
    "service_p50_ms",
    "service_p99_ms",
    *SERVER_COST,
    *CPU,
    "rss_end_mb",
)
"""The paced run's table: latency counted from each action's scheduled time."""


def rate_value(text: str) -> float | str:
    """``--rate``: actions per second per match (0 < R <= 1000), or ``half``."""
    if text == "half":
        return text
    try:
        value = float(text)
    except ValueError:
        msg = f"expected actions/s per match or half, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"expected 0 < actions/s per match <= 1000, got {text}")
    return value


def compare_paced(args: argparse.Namespace) -> int:
    """``--rate``: the SQLite server and the no-op ceiling paced; with ``half``, after the
    closed-loop capacity of the SQLite server measured in the same repeat."""
    plan = noop_plan(args)
    if args.rate != "half":
        fixed = run_all(args, plan, lambda r: f"p99 {r.p99_ms:,.1f} ms", rate=float(args.rate))
        report_paced(args, plan, fixed, {}, window_of(args, plan))
        return 0
    capacity_plan = [
        Configuration(f"capacity {pattern}", "durable", pattern=pattern)
        for pattern in args.patterns
    ]
    window = window_of(args, [*capacity_plan, *plan])
    runs: dict[str, list[RunResult]] = {c.label: [] for c in [*capacity_plan, *plan]}
    began = time.monotonic()
    for repeat in range(args.repeats):
        for capacity_config in capacity_plan:
            pattern = capacity_config.pattern
            closed = run_once("durable", args, window, repeat, 0, pattern=pattern)
            runs[capacity_config.label].append(closed)
            say(began, capacity_config, repeat, closed, "closed loop: the capacity")
            rate = closed.actions_per_s / 2 / args.matches
            paced = [c for c in plan if c.pattern == pattern]
            for config in paced if repeat % 2 == 0 else paced[::-1]:
                result = run_config(args, config, window, repeat, rate)
                runs[config.label].append(result)
                say(began, config, repeat, result, f"p99 {result.p99_ms:,.1f} ms")
    capacity = {c.pattern or args.pattern: runs[c.label] for c in capacity_plan}
    report_paced(args, plan, runs, capacity, window)
    return 0


def report_paced(
    args: argparse.Namespace,
    plan: Sequence[Configuration],
    runs: Mapping[str, Sequence[RunResult]],
    capacity: Mapping[str, Sequence[RunResult]],
    window: float,
) -> None:
    """The paced table, per configuration, and the ratios to the peers of the same run."""
    rate = "half the capacity" if args.rate == "half" else f"{args.rate:g} actions/s per match"
    print(
        f"cardarena paced (open-loop) load: {args.game}, {args.players} players, "
        f"{args.matches} concurrent matches at {rate}, {args.client_procs} client process(es) "
        f"x {args.channels} channels, {window:.1f} s per run, {args.repeats} repeat(s)"
        + (" (medians)" if args.repeats > 1 else "")
    )
    for pattern in args.patterns:
        print(f"pattern {pattern}: {PATTERNS[pattern]}; acknowledged: {ACKNOWLEDGED[pattern]}")
    for pattern, closed in capacity.items():
        each = ", ".join(f"{r.actions_per_s:,.0f}" for r in closed)
        print(
            f"capacity ({pattern}, closed loop, SQLite): {median_of(closed, 'actions_per_s'):,.0f} "
            f"actions/s (per run: {each}); closed-loop p99 {median_of(closed, 'p99_ms'):,.1f} ms; "
            f"paced at half: {median_of(closed, 'actions_per_s') / 2 / args.matches:.3f} "
            "actions/s per match"
        )
    print_table(args, plan, runs, PACED, latency="scheduled to ack")
    for config in plan:
        print_outcome(config.label, runs[config.label], say_none=True)
    for pattern in args.patterns:
        durable, noop = runs[f"durable {pattern}"], runs[f"noop {pattern}"]
        p99 = median_of(durable, "p99_ms")
        verdict = "meets" if p99 < P99_TARGET_MS else "misses"
        line = (
            f"{pattern}: durable p99 {p99:,.1f} ms ({verdict} the target of < "
            f"{P99_TARGET_MS:.0f} ms), {p99 / max(median_of(noop, 'p99_ms'), 1e-9):.2f}x the "
            f"no-op's; achieved / asked: durable {median_of(durable, 'achieved_fraction'):.2f}, "
            f"no-op {median_of(noop, 'achieved_fraction'):.2f}"
        )
        if pattern in capacity:
            share = statistics.median(
                d.actions_per_s / max(c.actions_per_s, 1e-9)
                for d, c in zip(durable, capacity[pattern], strict=True)
            )
            line += f"; durable achieved / capacity {share:.2f}"
        print(line)
