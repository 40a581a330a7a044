"""``cardarena tournament``: bots against each other on a server, with duplicate deals.

For each deal seed the same cards are played in every rotation of the seats, so the luck of
the deal cancels out; standings give each bot's mean score per match with a 95% interval
over those duplicate groups, its win rate and an OpenSkill rating, and count every crash,
hang and illegal move without ever stopping. Bots are Python classes or external programs
(``docs/bot-protocol.md``). This module is only the command: argument checks, then
:mod:`.runner`, :mod:`.standings`, :mod:`.ratings` and :mod:`.reports`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .argtypes import positive_int, seed_hex, server_address
from .botspec import BotEntry, check_unique, make_python_bot, parse_bot
from .outcomes import TournamentResult
from .progress import Progress
from .ratings import rate
from .reports import LEGEND, print_table, to_json, write_csv
from .runner import TournamentConfig, TournamentError, run_tournament
from .standings import Standing, standings

EXIT_OK, EXIT_FAILED_MATCHES, EXIT_USAGE = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.epilog = (
        "bots: module:Class, a short name (random, rules, mc…), NAME=SPEC[,KEY=VALUE…] for "
        "constructor arguments (e.g. mc50=mc,budget_ms=50), or exec:NAME=COMMAND for a program "
        "speaking the JSON-lines protocol of docs/bot-protocol.md"
    )
    parser.add_argument(
        "--server",
        type=server_address,
        default=os.environ.get("CARDARENA_SERVER", "127.0.0.1:50051"),
        help="HOST:PORT of the server, or several replicas' comma-separated (calls are spread"
        " round robin; default: $CARDARENA_SERVER or 127.0.0.1:50051)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CARDARENA_ADMIN_TOKEN") or None,
        help="the server's operator token, if it has one (default: $CARDARENA_ADMIN_TOKEN;"
        " prefer the variable: a flag shows in the process list)",
    )
    parser.add_argument("--game", required=True, help="the game, e.g. hexathlon")
    parser.add_argument(
        "--players", type=positive_int, default=0, help="seats per match (default: one per bot)"
    )
    parser.add_argument("--options", type=_json_object, default={}, help="game options as JSON")
    parser.add_argument(
        "--bot", action="append", required=True, metavar="SPEC", help="a contestant (repeat)"
    )
    parser.add_argument(
        "--deals", type=positive_int, default=2, help="deal seeds, each in every rotation"
    )
    parser.add_argument(
        "--concurrency", type=positive_int, default=4, help="matches played at once (default 4)"
    )
    parser.add_argument(
        "--move-ms",
        type=_non_negative,
        default=0,
        help="the server's time control per move (0: none); on expiry it plays the default",
    )
    parser.add_argument(
        "--decision-ms",
        type=_non_negative,
        default=0,
        help="the runner's limit per decision before it benches a bot "
        "(default: move-ms + 500, or 10000 without a time control)",
    )
    parser.add_argument(
        "--seed", type=seed_hex, default=None, help="64 hex digits: the tournament's seed"
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every result as JSON")
    parser.add_argument("--csv", type=Path, metavar="OUT", help="write the standings as CSV")
    parser.add_argument(
        "--bot-logs", type=Path, metavar="DIR", help="keep external bots' stderr here"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    def run(args: argparse.Namespace) -> int:
        try:
            bots = [parse_bot(text) for text in args.bot]
            check_unique(bots)
            for entry in bots:
                check_bot(entry)
        except ValueError as error:
            parser.error(str(error))
        seed = args.seed if args.seed is not None else os.urandom(32)
        config = TournamentConfig(
            address=args.server,
            game=args.game,
            bots=bots,
            players=args.players,
            options=args.options,
            deals=args.deals,
            concurrency=args.concurrency,
            move_ms=args.move_ms,
            decision_ms=args.decision_ms,
            seed=seed,
            bot_logs=args.bot_logs,
            operator_token=args.admin_token,
        )
        print(f"tournament seed {seed.hex()} (--seed reproduces the deals)", file=sys.stderr)
        try:
            result, rows = asyncio.run(play(config, progress=not args.no_progress))
        except TournamentError as error:
            print(f"cardarena tournament: {error}", file=sys.stderr)
            return EXIT_USAGE
        print_table(result, rows, sys.stdout)
        print(LEGEND)
        report = to_json(result, rows, settings(config))
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        if args.csv is not None:
            write_csv(args.csv, rows)
        return EXIT_FAILED_MATCHES if result.failed else EXIT_OK

    return run


async def play(
    config: TournamentConfig, *, progress: bool = True, label: str = ""
) -> tuple[TournamentResult, list[Standing]]:
    """Run the tournament and rank it: the library entry point (the main job uses it too)."""

    def bar(total: int) -> Progress:
        return Progress(total, label=label or config.game, enabled=None if progress else False)

    result = await run_tournament(config, progress=bar)
    ratings = rate(result.matches, result.bots, lowest_wins=result.lowest_wins)
    rows = standings(result.matches, result.bots, lowest_wins=result.lowest_wins, ratings=ratings)
    return result, rows


def check_bot(entry: BotEntry) -> None:
    """Fail before the first match on a bot that cannot possibly play."""
    if entry.kind == "exec":
        if shutil.which(entry.command[0]) is None:
            raise ValueError(f"bot {entry.name}: no program {entry.command[0]!r} to run")
    else:
        make_python_bot(entry, seed=0)


def settings(config: TournamentConfig) -> dict[str, Any]:
    return {
        "server": config.address,
        "options": config.options,
        "deals": config.deals,
        "concurrency": config.concurrency,
        "move_ms": config.move_ms,
        "decision_ms": round(config.decision_s * 1000),
        "seed": config.seed.hex(),
        "bot_specs": {b.name: b.describe() for b in config.bots},
    }


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("options must be a JSON object")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value
