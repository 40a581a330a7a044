"""The command line: the flags, their checks, and which plan (or the no-op server) to run.

Why: ``scripts/bench_server.py`` is only the entry point; the flags and their validation live
here, next to the one function that dispatches to ``compare.py`` or, in the process the
benchmark starts for the ceiling (the hidden ``--noop-server``), to ``noop.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cardarena.engine import GAMES

from .common import CARDARENA, LOOPBACK
from .compare import compare_noop, compare_replicas
from .noop import serve_noop
from .postgres import DEFAULT_STORE_URL
from .procs import find_py_spy


def bounded_int(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {low}..{high}, got {value}")
        return value

    return parse


def seconds_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 2 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"expected 2..3600 seconds, got {text}")
    return value


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Load benchmark of cardarena's server, next to a no-op gRPC ceiling.",
        epilog="Run on purpose, not as a test: it asserts nothing about speed.",
    )
    parser.add_argument(
        "--matches",
        type=bounded_int(1, 5000),
        default=200,
        help="concurrent matches, kept in play all along (default 200)",
    )
    parser.add_argument(
        "--seconds",
        type=seconds_value,
        default=50.0,
        help="total play time, split over the 2 x repeats server runs; setup comes on top "
        "(default 50, about 60 s in all)",
    )
    parser.add_argument(
        "--repeats",
        type=bounded_int(1, 9),
        default=1,
        help="runs of each server; the report shows medians (default 1)",
    )
    parser.add_argument("--game", choices=sorted(GAMES), default="hexathlon")
    parser.add_argument("--players", type=bounded_int(2, 8), default=4, help="(default 4)")
    parser.add_argument(
        "--pattern",
        choices=("turns", "replica", "resnapshot"),
        default="turns",
        help="turns: act on the stream's YourTurn prompts (default); replica: one stream per "
        "seat, turns and legal actions from a client-side engine replica; resnapshot: reopen "
        "the stream for a fresh snapshot before every action",
    )
    parser.add_argument(
        "--client-procs",
        type=bounded_int(1, 16),
        default=1,
        help="client processes sharing the matches (default 1)",
    )
    parser.add_argument(
        "--channels",
        type=bounded_int(1, 64),
        default=4,
        help="gRPC connections per client process (to each replica with --replicas; default 4)",
    )
    parser.add_argument(
        "--setup-concurrency",
        type=bounded_int(1, 1000),
        default=64,
        help="matches created or opened at once during setup (default 64)",
    )
    parser.add_argument(
        "--setup-timeout",
        type=seconds_value,
        default=300.0,
        help="bound on each setup phase (default 300)",
    )
    parser.add_argument("--seed", type=bounded_int(0, 2**31), default=1, help="(default 1)")
    parser.add_argument(
        "--py-spy",
        type=Path,
        metavar="FILE",
        help="record py-spy samples of the durable server's first window: a flame graph "
        "(.svg), collapsed stacks (.txt) or speedscope (.json)",
    )
    parser.add_argument(
        "--replicas",
        type=replica_counts,
        metavar="N,N,...",
        help="compare sharing: the SQLite single process, the no-op ceiling, then N "
        "cardarena replicas on one PostgreSQL (a fresh schema each) for each N, e.g. 1,2,3",
    )
    parser.add_argument(
        "--store-url",
        type=postgres_url,
        default=DEFAULT_STORE_URL,
        help=f"the PostgreSQL of --replicas, on loopback (default {DEFAULT_STORE_URL})",
    )
    parser.add_argument("--noop-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--noop-match-actions", type=bounded_int(0, 10**6), default=0, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--listen", type=loopback_listen, default=f"{LOOPBACK}:0", help=argparse.SUPPRESS
    )
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.noop_server:
        return args
    spec = GAMES[args.game]
    if args.players not in spec.players:
        parser.error(f"{args.game} is for {', '.join(map(str, spec.players))} players")
    if args.client_procs > args.matches:
        parser.error("--client-procs cannot exceed --matches")
    if args.py_spy is not None and find_py_spy() is None:
        parser.error("--py-spy needs py-spy on PATH or in the venv (pip install py-spy)")
    if not CARDARENA.exists():
        parser.error(f"{CARDARENA} not found: install the project into this interpreter's venv")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.noop_server:
        asyncio.run(serve_noop(args.listen, args.noop_match_actions))
        return 0
    try:
        if args.replicas:
            return compare_replicas(args)
        return compare_noop(args)
    except RuntimeError as error:  # a server or client process failed: said, no traceback
        print(f"bench_server: {error}", file=sys.stderr)
        return 1
