"""The command line: the flags, their checks, and which plan (or the no-op server) to run.

Why: ``scripts/bench_server.py`` is only the entry point; the flags and their validation live
here, next to the one function that dispatches to ``compare.py`` or, in the process the
benchmark starts for the ceiling (the hidden ``--noop-server``), to ``noop.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cardarena.engine import GAMES
from cardarena.server.app import tune_collector
from cardarena.server.cli import ranged

from .common import CARDARENA, LOOPBACK, Pattern
from .compare import compare_noop, compare_replicas
from .noop import serve_noop
from .paced import compare_paced, rate_value
from .postgres import DEFAULT_STORE_URL
from .procs import find_py_spy
from .restart import compare_restart
from .tournament import compare_tournament


def bounded_int(low: int, high: int, unit: str) -> Callable[[str], int]:
    """A flag's type: a whole number of ``unit`` from ``low`` to ``high``, read (and refused)
    as serve's number flags are."""
    return ranged(int, low, high, unit, "expected")


seconds_value = ranged(float, 2.0, 3600.0, "seconds", "expected")


def loopback_listen(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or host != LOOPBACK or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected {LOOPBACK}:PORT (loopback only), got {text!r}")
    return text


def replica_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts like 1,2,3, got {text!r}") from None
    if not counts or any(not 1 <= n <= 8 for n in counts) or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"expected distinct counts of 1..8, got {text!r}")
    return counts


PATTERNS: tuple[Pattern, ...] = ("turns", "play", "replica", "resnapshot")


def patterns_value(text: str) -> tuple[Pattern, ...]:
    chosen = [next((p for p in PATTERNS if p == part), None) for part in text.split(",")]
    if not chosen or None in chosen or len(set(chosen)) != len(chosen):
        raise argparse.ArgumentTypeError(f"expected distinct patterns of {', '.join(PATTERNS)}")
    return tuple(p for p in chosen if p is not None)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def postgres_url(text: str) -> str:
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("postgresql", "postgres") or not parts.path.strip("/"):
        raise argparse.ArgumentTypeError(f"expected postgresql://user@host:port/db, got {text!r}")
    if parts.hostname not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(f"the database must be on loopback, got {parts.hostname}")
    if any(key == "schema" for key, _ in urllib.parse.parse_qsl(parts.query)):
        raise argparse.ArgumentTypeError("no schema= here: each configuration gets a fresh one")
    return text


@dataclass(frozen=True)
class Count:
    """A whole-number flag: its range and unit (as :func:`bounded_int`), default and help."""

    name: str
    low: int
    high: int
    unit: str
    default: int
    help: str

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            self.name,
            type=bounded_int(self.low, self.high, self.unit),
            default=self.default,
            help=f"{self.help} (default {self.default})",
        )


# fmt: off
COUNTS = (
    Count("--restart-actions", 0, 100, "actions", 4, "actions in each running match of --restart"),
    Count("--concurrency", 1, 1000, "matches", 8, "matches either tournament plays at once"),
    Count("--client-procs", 1, 16, "processes", 1, "client processes sharing the matches"),
    Count("--channels", 1, 64, "connections", 4, "gRPC connections per client process (to each replica with --replicas)"),
    Count("--setup-concurrency", 1, 1000, "matches", 64, "matches created or opened at once during setup"),
)
# fmt: on


@dataclass(frozen=True)
class Mode:
    """What to measure instead of the closed loop: one flag of a mutually exclusive group."""

    name: str
    type: Callable[[str], object]
    metavar: str
    help: str


# fmt: off
MODES = (
    Mode("--rate", rate_value, "R|half", "paced, open-loop load: each match acts R times a second on a fixed schedule, latency counted from each action's scheduled time (p50/p90/p99/max); half: first measure the capacity (closed loop), then pace at half of it"),
    Mode("--restart", bounded_int(1, 50_000, "matches"), "N", "restart time: N unfinished matches on the SQLite server, then SIGKILL and SIGTERM restarts on the same data dir (--repeats of each), timed to listening and to the first answered GetMatch, beside a start on an empty data dir"),
    Mode("--tournament", bounded_int(1, 10_000, "deals"), "DEALS", "tournament throughput: a tournament hosted by the server (one `cardarena bot connect` process per random entrant, started by the launcher) and one of the in-process runner (run_tournament), each DEALS deals (each in every rotation) on a fresh SQLite server, beside the closed-loop ceiling of the same game, same run"),
    Mode("--replicas", replica_counts, "N,N,...", "compare sharing: the SQLite single process, the no-op ceiling, then N cardarena replicas on one PostgreSQL (a fresh schema each) for each N, e.g. 1,2,3"),
)
# fmt: on


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Load benchmark of cardarena's server, next to a no-op gRPC ceiling.",
        epilog="Run on purpose, not as a test: it asserts nothing about speed.",
    )
    parser.add_argument(
        "--matches",
        type=bounded_int(1, 10_000, "matches"),
        help="concurrent matches, kept in play all along (default 200; with --tournament, "
        "the closed-loop ceiling's, default its --concurrency)",
    )
    parser.add_argument(
        "--seconds",
        type=seconds_value,
        default=50.0,
        help="total play time, split over the runs (2 servers x patterns x repeats; --rate "
        "half adds a capacity run per pattern; --tournament: the ceiling's runs only); setup "
        "comes on top (default 50, about 60 s in all)",
    )
    parser.add_argument(
        "--repeats",
        type=bounded_int(1, 9, "runs"),
        default=1,
        help="runs of each server; the report shows medians (default 1)",
    )
    parser.add_argument(
        "--game",
        choices=sorted(GAMES),
        help="(default hexathlon; with --tournament, triathlon)",
    )
    parser.add_argument(
        "--players", type=bounded_int(2, 8, "players"), help="(default: the game's default, 4 or 3)"
    )
    parser.add_argument(
        "--pattern",
        type=patterns_value,
        default=("turns",),
        metavar="PATTERN[,PATTERN]",
        help="turns: act on the StreamEvents YourTurn prompts with unary SubmitAction "
        "(default); play: the same on one bidirectional Play stream per seat; turns,play: both "
        "in one run, each beside its no-op ceiling; replica: one stream per seat, turns and "
        "legal actions from a client-side engine replica; resnapshot: reopen the stream for a "
        "fresh snapshot before every action",
    )
    mode = parser.add_argument_group(
        "what to measure (one at most; by default the closed loop beside the no-op ceiling)"
    ).add_mutually_exclusive_group()
    for flag in MODES:
        mode.add_argument(flag.name, type=flag.type, metavar=flag.metavar, help=flag.help)
    for count in COUNTS:
        count.add_to(parser)
    parser.add_argument(
        "--store-url",
        type=postgres_url,
        default=DEFAULT_STORE_URL,
        help=f"the PostgreSQL of --replicas, on loopback (default {DEFAULT_STORE_URL})",
    )
    parser.add_argument(
        "--nofile",
        type=bounded_int(64, 1 << 20, "files"),
        metavar="N",
        help="lower the open-file limit (RLIMIT_NOFILE) of the benchmark and of every process it "
        "starts to N, e.g. 1024, to show a run fits in it",
    )
    parser.add_argument(
        "--setup-timeout",
        type=seconds_value,
        default=300.0,
        help="bound on each setup phase (default 300)",
    )
    parser.add_argument("--seed", type=bounded_int(0, 2**31, ""), default=1, help="(default 1)")
    parser.add_argument(
        "--py-spy",
        type=Path,
        metavar="FILE",
        help="record py-spy samples of the durable server's first window: a flame graph "
        "(.svg), collapsed stacks (.txt) or speedscope (.json)",
    )
    parser.add_argument(
        "--stages",
        action="store_true",
        help="also time each stage of an action in both servers (CARDARENA_STAGE_TIMES=1) and "
        "print where an action's time goes, stage by stage, beside the ceiling's (closed loop)",
    )
    parser.add_argument(
        "--unbatched",
        action="store_true",
        help="open each seat's Play call or stream without PlayOpen.batched or "
        "StreamEventsRequest.batched, one message per event as before they existed (default: "
        "batched, a write's events on one message)",
    )
    parser.add_argument("--noop-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--noop-match-actions",
        type=bounded_int(0, 10**6, "actions"),
        default=0,
        help=argparse.SUPPRESS,
    )
    parser.add_argument(
        "--listen", type=loopback_listen, default=f"{LOOPBACK}:0", help=argparse.SUPPRESS
    )
    return parser


def set_nofile(parser: argparse.ArgumentParser, limit: int) -> None:
    """Lower this process's soft open-file limit; the processes it starts inherit it."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and limit > hard:
        parser.error(f"--nofile {limit} is above the hard limit {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.noop_server:
        return args
    args.patterns = args.pattern
    args.pattern = args.patterns[0]
    args.game = args.game or ("triathlon" if args.tournament else "hexathlon")
    spec = GAMES[args.game]
    args.players = args.players or spec.default_players
    args.matches = args.matches or (args.concurrency if args.tournament else 200)
    if args.nofile is not None:
        set_nofile(parser, args.nofile)
    if len(args.patterns) > 1 and args.replicas:
        parser.error("--replicas takes one --pattern")
    unpaced = {"replica", "resnapshot"}.intersection(args.patterns)
    if args.rate is not None and (args.replicas or unpaced):
        parser.error("--rate paces the turns and play patterns of one server")
    if args.players not in spec.players:
        parser.error(f"{args.game} is for {', '.join(map(str, spec.players))} players")
    if args.client_procs > args.matches:
        parser.error("--client-procs cannot exceed --matches")
    if args.stages:
        if args.rate is not None or args.replicas or args.restart or args.tournament:
            parser.error("--stages times the closed loop beside the ceiling: no other mode")
        os.environ["CARDARENA_STAGE_TIMES"] = "1"  # the servers started from here inherit it
    if args.py_spy is not None and find_py_spy() is None:
        parser.error("--py-spy needs py-spy on PATH or in the venv (pip install py-spy)")
    if not CARDARENA.exists():
        parser.error(f"{CARDARENA} not found: install the project into this interpreter's venv")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.noop_server:
        tune_collector()  # as `cardarena serve` does: the same collector for both
        asyncio.run(serve_noop(args.listen, args.noop_match_actions))
        return 0
    try:
        if args.restart:
            return compare_restart(args)
        if args.tournament:
            return compare_tournament(args)
        if args.replicas:
            return compare_replicas(args)
        if args.rate is not None:
            return compare_paced(args)
        return compare_noop(args)
    except RuntimeError as error:  # a server or client process failed: said, no traceback
        print(f"bench_server: {error}", file=sys.stderr)
        return 1
