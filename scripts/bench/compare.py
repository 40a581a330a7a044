"""The two plans a run of the benchmark follows: what is measured against what, and in which order.

Why: both plans run every configuration ``--repeats`` times with the order reversed every other
repeat (so a drift of the machine's load does not favour one), split ``--seconds`` evenly over
the runs, and report medians. The default compares the SQLite server with the no-op ceiling;
``--replicas 1,2,3`` adds N PostgreSQL replicas per N, each set on a fresh schema that is
dropped however the run ends (Ctrl-C, SIGTERM), and needs the database to answer (else exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import random
import signal
import sys
import time
from collections.abc import Callable, Sequence

from cardarena.engine.match import setup

from .common import Configuration
from .postgres import check_postgres, drop_live_schemas, fresh_schema
from .report import report_noop, report_replicas
from .run import RunResult, run_once
from .stages import report_stages


def noop_plan(args: argparse.Namespace) -> list[Configuration]:
    """The SQLite server and the no-op ceiling, for each pattern of ``--pattern``."""
    return [
        Configuration(f"{kind} {pattern}", kind, pattern=pattern)
        for pattern in args.patterns
        for kind in ("durable", "noop")
    ]


def configurations(counts: Sequence[int]) -> list[Configuration]:
    return [
        Configuration("SQLite, 1 process", "durable"),
        Configuration("no-op ceiling", "noop"),
        *(
            Configuration(f"PostgreSQL, {n} replica{'s' if n > 1 else ''}", "postgres", n)
            for n in counts
        ),
    ]


@functools.cache
def mean_match_actions(game: str, players: int, matches: int = 20) -> int:
    """How many actions a random match of ``game`` takes, on average (engine only, ~50 ms)."""
    prepared = setup(game, players=players, options={})
    rng = random.Random(0)
    total = 0
    for index in range(matches):
        match = prepared.start(hashlib.sha256(f"length/{index}".encode()).digest())
        while not match.over:
            seat = match.to_act
            assert seat is not None
            match.apply(seat, rng.choice(match.legal_actions()))
            total += 1
    return max(1, total // matches)


def window_of(args: argparse.Namespace, configs: Sequence[Configuration]) -> float:
    """The play time of one run: ``--seconds`` split over every run of every configuration."""
    return float(args.seconds / (len(configs) * args.repeats))


def noop_match_actions(args: argparse.Namespace, config: Configuration) -> int:
    """After how many actions the no-op server ends a match: as many as a real one takes on
    average where the clients follow the prompts; never where they keep an engine replica."""
    pattern = config.pattern or args.pattern
    return mean_match_actions(args.game, args.players) if pattern in ("turns", "play") else 0


def say(began: float, config: Configuration, repeat: int, result: RunResult, what: str) -> None:
    """One line on stderr after each run, so a long benchmark shows it is moving."""
    print(
        f"[{time.monotonic() - began:6.1f} s] {config.label} run {repeat + 1}: "
        f"{result.actions_per_s:,.0f} actions/s, {what}",
        file=sys.stderr,
        flush=True,
    )


def run_all(
    args: argparse.Namespace,
    configs: Sequence[Configuration],
    describe: Callable[[RunResult], str],
    rate: float = 0.0,
) -> dict[str, list[RunResult]]:
    """Every configuration ``--repeats`` times, the order reversed every other repeat; a line
    on stderr after each run (``describe`` says what of it). ``rate``: paced (``--rate``)."""
    window = window_of(args, configs)
    runs: dict[str, list[RunResult]] = {c.label: [] for c in configs}
    began = time.monotonic()
    for repeat in range(args.repeats):
        for config in configs if repeat % 2 == 0 else configs[::-1]:
            result = run_config(args, config, window, repeat, rate)
            runs[config.label].append(result)
            say(began, config, repeat, result, describe(result))
    return runs


def run_config(
    args: argparse.Namespace, config: Configuration, window: float, repeat: int, rate: float
) -> RunResult:
    """One run of ``config`` (on a fresh PostgreSQL schema for a PostgreSQL one), its clients
    paced at ``rate`` actions a second per match (0: closed loop)."""
    with contextlib.ExitStack() as stack:
        store = None
        if config.kind == "postgres":
            store = stack.enter_context(fresh_schema(args.store_url))
        return run_once(
            config.kind,
            args,
            window,
            repeat,
            noop_match_actions(args, config),
            config.count,
            store,
            pattern=config.pattern,
            rate=rate,
        )


def compare_noop(args: argparse.Namespace) -> int:
    """The default: the SQLite server and the no-op ceiling, ``--repeats`` times each, for
    each pattern of ``--pattern``."""
    plan = noop_plan(args)
    runs = run_all(args, plan, lambda result: f"{result.completed} matches completed")
    report_noop(args, plan, runs, window_of(args, plan))
    if args.stages:
        report_stages(args, plan, runs)
    if args.py_spy:
        print(f"py-spy profile of the durable server: {args.py_spy}")
    return 0


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def compare_replicas(args: argparse.Namespace) -> int:
    """One run of every configuration per repeat (the order reversed every other repeat);
    a fresh schema per replicated run, dropped afterwards, interrupted or not."""
    problem = check_postgres(args.store_url)
    if problem is not None:
        print(
            f"bench_server: PostgreSQL at {args.store_url} is unreachable: {problem}",
            file=sys.stderr,
        )
        return 2
    configs = configurations(args.replicas)
    signal.signal(signal.SIGTERM, interrupt)  # stop servers and drop schemas on SIGTERM too
    try:
        runs = run_all(
            args,
            configs,
            lambda result: f"{result.server_cpu_us_per_action:,.0f} us server CPU per action",
        )
    except KeyboardInterrupt:
        print("bench_server: interrupted; servers stopped, schemas dropped", file=sys.stderr)
        return 130
    finally:
        drop_live_schemas()
    report_replicas(args, configs, runs, window_of(args, configs))
    if args.py_spy:
        print(f"py-spy profile of the SQLite server: {args.py_spy}")
    return 0
