"""``cardarena tournament``: bots against each other on a server, with duplicate deals.

The server hosts the tournament and every bot is its own process, connected as an entrant
(:mod:`.hosted`): no bot shares this process, so none can read another's state or end the
tournament.

For each deal seed the same cards are played in every rotation of the seats, so the luck of
the deal cancels out; standings give each bot's mean score per match with a 95% interval
over those duplicate groups, its win rate and an OpenSkill rating, and count every
time-out, refused action and disconnect, a seat forfeiting after ``--forfeit-after``. Bots
are Python classes or external programs (``docs/bot-protocol.md``). This module is only the
command: argument checks, then :mod:`cardarena.clients.tournament` launches and reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from ..tournament import check_unique
from .argtypes import (
    MAX_CONCURRENCY,
    MAX_CPU_SECONDS,
    MAX_DEALS,
    MAX_FORFEIT_AFTER,
    MAX_MEMORY_MB,
    MAX_MOVE_MS,
    MAX_SEATS,
    MIN_MEMORY_MB,
    checked_bot,
    json_object,
    output_dir,
    output_file,
    seed_hex,
    server_address,
    whole,
)
from .configfile import LoadConfig, merged
from .hosted import run_attached, run_cancel, run_hosted

EXIT_OK, EXIT_FAILED_MATCHES, EXIT_USAGE = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """play bots against each other on a server: duplicate deals, standings, ratings"""
    parser.epilog = (
        "bots: module:Class, a short name (random, rules, mc…), NAME=SPEC[,KEY=VALUE…] for "
        "constructor arguments (e.g. mc50=mc,budget_ms=50), or exec:NAME=COMMAND for a program "
        "speaking the JSON-lines protocol of docs/bot-protocol.md"
    )
    parser.add_argument(
        "--server",
        type=server_address,
        default=os.environ.get("CARDARENA_SERVER", "127.0.0.1:50051"),
        metavar="HOST:PORT",
        help="the server, or several replicas' comma-separated (calls are spread"
        " round robin; default: $CARDARENA_SERVER or 127.0.0.1:50051)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CARDARENA_ADMIN_TOKEN") or None,
        help="the server's operator token, if it has one (default: $CARDARENA_ADMIN_TOKEN;"
        " prefer the variable: a flag shows in the process list)",
    )
    parser.add_argument(
        "--config",
        action=LoadConfig,
        metavar="FILE.toml",
        help="take the flags from a TOML file (keys are the flags: game, bot = [...],"
        " [options], deals, …); flags given here win",
    )
    parser.add_argument("--game", help="the game, e.g. hexathlon")
    parser.add_argument(
        "--players",
        type=whole(1, MAX_SEATS, zero="one per bot"),
        default=0,
        help="seats per match, as many as the game is played by (default: one per bot)",
    )
    parser.add_argument("--options", type=json_object, default={}, help="game options as JSON")
    parser.add_argument("--bot", action="append", metavar="SPEC", help="a contestant (repeat)")
    parser.add_argument(
        "--deals",
        type=whole(1, MAX_DEALS),
        default=2,
        help=f"deal seeds, each in every rotation, 1..{MAX_DEALS} (default: %(default)s)",
    )
    parser.add_argument(
        "--concurrency",
        type=whole(1, MAX_CONCURRENCY),
        default=4,
        help=f"matches played at once, 1..{MAX_CONCURRENCY} (default: %(default)s)",
    )
    parser.add_argument(
        "--move-ms",
        type=whole(1, MAX_MOVE_MS),
        default=10_000,
        help=f"the time per move, 1..{MAX_MOVE_MS} (default: %(default)s): on expiry the"
        " server plays the seat's default action and counts a fault",
    )
    parser.add_argument(
        "--seed",
        type=seed_hex,
        default=None,
        help="64 hex digits: the tournament's seed, to replay one (default: the server draws a"
        " secret one and shows it when the tournament ends)",
    )
    parser.add_argument(
        "--json", type=output_file, metavar="OUT", help="write every result as JSON"
    )
    parser.add_argument("--csv", type=output_file, metavar="OUT", help="write the standings as CSV")
    parser.add_argument(
        "--bot-logs", type=output_dir, metavar="DIR", help="keep external bots' stderr here"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    hosted = parser.add_argument_group(
        "hosted by the server (the bots connect as entrants, each in its own process)"
    )
    hosted.add_argument("--attach", metavar="ID", help="follow a hosted tournament again")
    hosted.add_argument("--cancel", metavar="ID", help="end a hosted tournament")
    hosted.add_argument(
        "--forfeit-after",
        type=whole(1, MAX_FORFEIT_AFTER, zero="never"),
        default=3,
        help=f"faults in a match after which a seat forfeits it, 1..{MAX_FORFEIT_AFTER} (0:"
        " never, the fallback policy; default: %(default)s)",
    )
    hosted.add_argument(
        "--bot-cpu-seconds",
        type=whole(1, MAX_CPU_SECONDS, zero="no limit"),
        default=0,
        help="CPU seconds each bot process may use (0: no limit, the default)",
    )
    hosted.add_argument(
        "--bot-memory-mb",
        type=whole(MIN_MEMORY_MB, MAX_MEMORY_MB, zero="no limit"),
        default=4096,
        help=f"address space of each bot process in MiB, {MIN_MEMORY_MB}..{MAX_MEMORY_MB}"
        " (0: no limit; default: %(default)s)",
    )

    def run(args: argparse.Namespace) -> int:
        args = merged(parser, args)
        if args.attach:
            return run_attached(args)
        if args.cancel:
            return run_cancel(args)
        if not args.game or not args.bot:
            parser.error("name the game and the bots: --game and --bot, or a --config file")
        try:
            bots = [checked_bot(text) for text in args.bot]
            check_unique(bots)
        except ValueError as error:
            parser.error(str(error))
        if args.seed is not None:
            print(
                "the tournament's seed is given: its deals are reproducible, and known to"
                " whoever can see it (the server draws a secret one without --seed)",
                file=sys.stderr,
            )
        return run_hosted(args, bots, args.seed or b"")

    return run
