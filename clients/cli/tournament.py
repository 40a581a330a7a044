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

Its actions (``create``, ``status``, ``results``, ``watch``, ``cancel``: :mod:`.competition`)
run a competition whose entrants play from machines of their own; every tournament setting
is a flag of :mod:`.settings`, the same for the launcher and for ``create``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ..tournament import check_unique
from ..tournament.launcher import ENTRY_MS
from .access import add_operator, add_server, operator_token
from .argtypes import (
    MAX_CPU_SECONDS,
    MAX_MEMORY_MB,
    MIN_MEMORY_MB,
    checked_bot,
    output_dir,
    output_file,
    whole,
)
from .competition import add_actions
from .configfile import LoadConfig, merged
from .hosted import run_attached, run_cancel, run_hosted
from .settings import add_settings, check_settings

EXIT_OK, EXIT_FAILED_MATCHES, EXIT_USAGE = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """play bots against each other on a server; create, follow and end hosted tournaments"""
    parser.epilog = (
        "bots: module:Class, a short name (random, rules, mc…), NAME=SPEC[,KEY=VALUE…] for "
        "constructor arguments (e.g. mc50=mc,budget_ms=50), or exec:NAME=COMMAND for a program "
        "speaking the JSON-lines protocol of docs/bot-protocol.md. Entrants who play from"
        " machines of their own: cardarena tournament create --help (docs/competition.md)"
    )
    add_server(parser)
    add_operator(parser)
    parser.add_argument(
        "--config",
        action=LoadConfig,
        metavar="FILE.toml",
        help="take the flags from a TOML file (keys are the flags: game, bot = [...],"
        " [options], deals, …); flags given here win",
    )
    parser.add_argument("--bot", action="append", metavar="SPEC", help="a contestant (repeat)")
    add_settings(parser, "bot")
    parser.set_defaults(entry_ms=ENTRY_MS)
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
    hosted.add_argument(
        "--attach", metavar="ID", help="follow a hosted tournament again (as: watch ID)"
    )
    hosted.add_argument("--cancel", metavar="ID", help="end a hosted tournament (as: cancel ID)")
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
    add_actions(parser)

    def run(args: argparse.Namespace) -> int:
        act: Callable[[argparse.Namespace], int] | None = getattr(args, "act", None)
        if act is not None:
            return act(args)
        args = merged(parser, args)
        try:
            args.operator_token = operator_token(args)
        except ValueError as error:
            parser.error(str(error))
        if args.attach:
            return run_attached(args, args.attach)
        if args.cancel:
            return run_cancel(args, args.cancel, reason="cancelled from the launcher")
        if not args.game or not args.bot:
            parser.error(
                "name the game and the bots: --game and --bot, or a --config file (or an"
                " action: create, status, results, watch, cancel)"
            )
        try:
            bots = [checked_bot(text) for text in args.bot]
            check_unique(bots)
            check_settings(args, [bot.name for bot in bots], "bot")
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
