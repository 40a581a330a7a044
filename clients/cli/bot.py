"""``cardarena bot connect``: play a server's tournament as one entrant, from any machine.

The host gives the entrant a tournament id and a key; this connects with them, is told every
match the entrant is seated in, and plays each with the bot (a Python class or an ``exec:``
program, as ``tournament --bot`` takes them) until the tournament ends. The key is read from
``--key-file`` or the environment (``CARDARENA_ENTRANT_KEY``) rather than a flag where it can
be: a flag shows in the process list.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

import grpc

from cardarena.competition import bot_seed
from cardarena.v1 import tournament_pb2 as tpb

from ..bots.decider import Decider, PythonDecider
from ..bots.external import ExternalDecider
from ..client import ArenaClient
from ..tournament.botspec import BotEntry, check_bot, make_python_bot, parse_bot
from ..tournament.entrant import play_entrant
from ..tournament.launcher import Limits, apply_limits
from ..tournament.terminal import print_error
from .argtypes import non_negative_int, seed_hex, server_address

KEY_ENV = "CARDARENA_ENTRANT_KEY"


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """play a server's tournament as an entrant (cardarena bot connect …)"""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    connect = actions.add_parser(
        "connect", help="connect as an entrant and play every match the server seats it in"
    )
    connect.add_argument(
        "--server",
        type=server_address,
        default=os.environ.get("CARDARENA_SERVER", "127.0.0.1:50051"),
        help="HOST:PORT of the server (default: $CARDARENA_SERVER or 127.0.0.1:50051)",
    )
    connect.add_argument("--tournament", required=True, help="the tournament's id")
    connect.add_argument(
        "--key", help=f"the entrant's key (prefer --key-file or ${KEY_ENV}: a flag is visible)"
    )
    connect.add_argument("--key-file", type=Path, help="a file holding the entrant's key")
    connect.add_argument(
        "--bot-log", type=Path, help="an exec: bot's standard error goes to this file"
    )
    connect.add_argument(
        "--bot-seed",
        type=seed_hex,
        help="64 hex digits: a Python bot's seed for each match derives from it and the"
        " match's place in the schedule (the launcher passes one made from --seed, so a"
        " tournament replays exactly; default: random)",
    )
    connect.add_argument(
        "--cpu-seconds",
        type=non_negative_int,
        default=0,
        help="CPU seconds this may use (0: no limit)",
    )
    connect.add_argument(
        "--memory-mb", type=non_negative_int, default=0, help="address space in MiB (0: no limit)"
    )
    connect.add_argument(
        "bot",
        metavar="SPEC",
        help="the bot: module:Class, path/to/bot.py:Class, a short name"
        " (random, rules, mc), NAME=SPEC[,KEY=VALUE…] or exec:NAME=COMMAND",
    )
    return run_connect


def run_connect(args: argparse.Namespace) -> int:
    apply_limits(Limits(cpu_seconds=args.cpu_seconds, memory_mb=args.memory_mb))
    try:
        entry = check_bot(parse_bot(args.bot))
        key = _key(args)
    except (ValueError, OSError) as error:
        print_error("cardarena bot connect", str(error))
        return 2
    try:
        seed = args.bot_seed if args.bot_seed is not None else os.urandom(32)
        # A given bot seed replays the run: the contribution to the tournament seed then
        # derives from it too (else it is as fresh and secret as the seed).
        contribution = hashlib.sha256(b"cardarena-entrant-entropy-v1" + seed).digest()
        final = asyncio.run(
            _connect(args.server, args.tournament, key, entry, args.bot_log, seed, contribution)
        )
    except grpc.aio.AioRpcError as error:
        print_error("cardarena bot connect", f"{error.code().name}: {error.details()}")
        return 1
    except KeyboardInterrupt:
        print("cardarena bot connect: stopped; connect again to go on playing", file=sys.stderr)
        return 130
    print(f"tournament {final.tournament_id} ended: {final.end_reason}")
    return 0


def _key(args: argparse.Namespace) -> str:
    if args.key:
        return str(args.key)
    if args.key_file is not None:
        return str(args.key_file.read_text().strip())
    key = os.environ.get(KEY_ENV, "")
    if not key:
        raise ValueError(f"give the entrant's key: --key-file FILE, ${KEY_ENV} or --key")
    return key


async def _connect(
    address: str,
    tournament_id: str,
    key: str,
    entry: BotEntry,
    bot_log: Path | None,
    bots_seed: bytes,
    contribution: bytes,
) -> tpb.TournamentInfo:
    async with ArenaClient(address, retry_for=60) as client:

        def make(assigned: tpb.MatchAssigned) -> Decider:
            if entry.kind == "exec":
                return ExternalDecider(entry.command, stderr_path=bot_log)
            seed = bot_seed(bots_seed, assigned.index, assigned.seat)
            return PythonDecider(lambda: make_python_bot(entry, seed=seed))

        report = await play_entrant(client, tournament_id, key, make, contribution=contribution)
        assert report.final is not None
        for line in report.summary():  # with the late answers its program wrote
            print(line, file=sys.stderr)
        return report.final
