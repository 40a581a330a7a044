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
import re
import sys
from collections.abc import Callable
from pathlib import Path

import grpc

from cardarena.competition import bot_seed
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import tournament_pb2 as tpb

from ..bots.decider import Decider, PythonDecider
from ..bots.external import ExternalDecider
from ..client import ArenaClient, Unreachable
from ..tournament.botspec import BotEntry, make_python_bot
from ..tournament.entrant import LadderEntry, play_entrant
from ..tournament.launcher import Limits, apply_limits
from ..tournament.terminal import print_error
from .argtypes import (
    MAX_CPU_SECONDS,
    MAX_MEMORY_MB,
    MAX_WAIT_S,
    MIN_MEMORY_MB,
    checked_bot,
    seconds,
    seed_hex,
    server_address,
    whole,
)

VERSION = re.compile(r"[A-Za-z0-9._-]{1,32}")
"""A ladder bot's version (the server's rule)."""
MAX_CAPACITY = 256
"""The most matches an entrant may say it plays at once (the server's limit)."""

KEY_ENV = "CARDARENA_ENTRANT_KEY"
GIVE_UP_AFTER_S = 60.0


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """play a server's tournament as an entrant (cardarena bot connect …)"""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    connect = actions.add_parser(
        "connect",
        help="connect as an entrant and play every match the server seats it in",
        description="Connect to a server's tournament (or ladder) as the entrant the key"
        " belongs to, and play every match the server seats it in with the bot, until the"
        " tournament ends (or the ladder closes)."
        " The key comes from --key-file, $CARDARENA_ENTRANT_KEY or --key (a flag shows in"
        " the process list).",
    )
    connect.add_argument(
        "--server",
        type=server_address,
        default=os.environ.get("CARDARENA_SERVER", "127.0.0.1:50051"),
        metavar="HOST:PORT",
        help="the server (default: $CARDARENA_SERVER or 127.0.0.1:50051)",
    )
    connect.add_argument(
        "--give-up-after",
        type=seconds(MAX_WAIT_S),
        default=GIVE_UP_AFTER_S,
        metavar="S",
        help="seconds to keep trying (with exponential back-off) when the server cannot be"
        " reached, at the start or after the connection broke (default: %(default)g)",
    )
    where = connect.add_mutually_exclusive_group(required=True)
    where.add_argument("--tournament", metavar="ID", help="the tournament's id")
    where.add_argument(
        "--ladder", metavar="ID", help="a ladder's id: play on it until it closes (or Ctrl-C)"
    )
    connect.add_argument(
        "--version",
        type=bot_version,
        default=None,
        metavar="V",
        help="on a ladder, the bot's version (1 to 32 of A-Z a-z 0-9 . _ -): a new one starts"
        " afresh on the board, and the old one is retired",
    )
    connect.add_argument(
        "--key", help=f"the entrant's key (prefer --key-file or ${KEY_ENV}: a flag is visible)"
    )
    connect.add_argument(
        "--key-file", type=Path, metavar="FILE", help="a file holding the entrant's key"
    )
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
        "--capacity",
        type=whole(1, MAX_CAPACITY, zero="as many as the tournament runs"),
        default=0,
        metavar="N",
        help=f"the most matches to play at once, 1..{MAX_CAPACITY}: the server never seats"
        " this entrant in more (0: as many as the tournament runs at once, the default)",
    )
    connect.add_argument(
        "--cpu-seconds",
        type=whole(1, MAX_CPU_SECONDS, zero="no limit"),
        default=0,
        help="CPU seconds this may use (0: no limit, the default)",
    )
    connect.add_argument(
        "--memory-mb",
        type=whole(MIN_MEMORY_MB, MAX_MEMORY_MB, zero="no limit"),
        default=0,
        help=f"address space in MiB, {MIN_MEMORY_MB}..{MAX_MEMORY_MB} (0: no limit, the default)",
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
        entry = checked_bot(args.bot)
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
            _connect(
                args.server,
                args.tournament or args.ladder,
                key,
                entry,
                args.bot_log,
                seed,
                contribution,
                args.give_up_after,
                args.capacity,
                None if args.ladder is None else LadderEntry(args.version or ""),
            )
        )
    except Unreachable as error:
        print_error("cardarena bot connect", f"{error}; --give-up-after S tries for longer")
        return 1
    except grpc.aio.AioRpcError as error:
        print_error(
            "cardarena bot connect", f"{args.server}: {error.code().name}: {error.details()}"
        )
        return 1
    except KeyboardInterrupt:
        print("cardarena bot connect: stopped; connect again to go on playing", file=sys.stderr)
        return 130
    if isinstance(final, lpb.LadderInfo):
        print(f"ladder {final.ladder_id} closed")
    else:
        print(f"tournament {final.tournament_id} ended: {final.end_reason}")
    return 0


def bot_version(text: str) -> str:
    """A flag's type: a ladder bot's version."""
    if not VERSION.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"expected 1 to 32 characters of A-Z a-z 0-9 . _ -, got {text[:40]!r}"
        )
    return text


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
    give_up_after: float,
    capacity: int = 0,
    ladder: LadderEntry | None = None,
) -> tpb.TournamentInfo | lpb.LadderInfo:
    async with ArenaClient(address, retry_for=give_up_after) as client:
        await client.connected(within=give_up_after)

        def make(assigned: tpb.MatchAssigned) -> Decider:
            if entry.kind == "exec":
                return ExternalDecider(entry.command, stderr_path=bot_log)
            seed = bot_seed(bots_seed, assigned.index, assigned.seat)
            return PythonDecider(lambda: make_python_bot(entry, seed=seed))

        report = await play_entrant(
            client,
            tournament_id,
            key,
            make,
            contribution=contribution,
            reconnect_for=give_up_after,
            capacity=capacity,
            ladder=ladder,
        )
        assert report.final is not None
        for line in report.summary():  # with the late answers its program wrote
            print(line, file=sys.stderr)
        return report.final
