"""``cardarena tournament``, hosted: the server hosts the tournament, the bots connect.

The launcher of :mod:`cardarena.clients.tournament.launcher`: create the tournament, start
every bot as its own ``cardarena bot connect`` process, show progress and the server's
standings. Ctrl-C detaches (the tournament and the bots go on; ``--attach`` follows again,
``--cancel`` ends it); results can be written at any moment from the server's standings.
Following, cancelling and the results are also the actions of ``cardarena tournament``
(:mod:`.competition`), for any hosted tournament, launched here or not; ``args.operator_token``
is the token the command resolved (:func:`.access.operator_token`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence

import grpc

from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient, Unreachable
from ..fields import fields_of
from ..tournament.botspec import BotEntry
from ..tournament.hosted_report import hosted_json, print_hosted, write_hosted_csv
from ..tournament.launcher import BotFailedToStart, HostedConfig, Launch, Limits, follow
from ..tournament.progress import LiveProgress
from ..tournament.terminal import print_error
from .argtypes import writing
from .settings import request_of

EXIT_OK, EXIT_FAILED_MATCHES, EXIT_USAGE, EXIT_DETACHED = 0, 1, 2, 130
EXIT_UNREACHABLE = 1
UNREACHABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
"""A server that is not there, or went away: a failure (1); a refusal is a usage error (2)."""


def run_hosted(args: argparse.Namespace, bots: Sequence[BotEntry], seed: bytes) -> int:
    config = HostedConfig(
        **fields_of(args, "game", "players", "options", "deals", "concurrency", "bot_logs"),
        address=args.server,
        bots=bots,
        move_ms=args.move_ms,
        forfeit_after=args.forfeit_after or None,
        seed=seed,
        operator_token=args.operator_token,
        limits=Limits(cpu_seconds=args.bot_cpu_seconds, memory_mb=args.bot_memory_mb),
        template=request_of(args, "bot"),
    )
    return refusals(lambda: asyncio.run(_host(config, args)), args)


def run_attached(args: argparse.Namespace, tournament_id: str) -> int:
    """Follow a hosted tournament to its end, then print and write its results."""
    return refusals(lambda: asyncio.run(_attach(args, tournament_id)), args)


def refusals(run: Callable[[], int], args: argparse.Namespace) -> int:
    """The server's refusal as one line and exit status 2, its absence as one line naming
    the address and exit status 1; never a traceback."""
    action = getattr(args, "action", None)
    command = f"cardarena tournament {action}" if action else "cardarena tournament"
    try:
        return run()
    except Unreachable as error:
        print_error(command, str(error))
        return EXIT_UNREACHABLE
    except grpc.aio.AioRpcError as error:
        print_error(command, f"{args.server}: {error.code().name}: {error.details()}")
        return EXIT_UNREACHABLE if error.code() in UNREACHABLE else EXIT_USAGE


def run_cancel(
    args: argparse.Namespace, tournament_id: str, *, reason: str, secret: str | None = None
) -> int:
    """Cancel a hosted tournament, as the operator or with its creator ``secret``."""

    async def cancel() -> tpb.TournamentInfo:
        async with ArenaClient(args.server, operator_token=args.operator_token) as client:
            await client.connected()
            return await client.tournaments.cancel(tournament_id, reason=reason, secret=secret)

    def cancelled() -> int:
        info = asyncio.run(cancel())
        print(f"tournament {info.tournament_id}: {info.end_reason}")
        return EXIT_OK

    return refusals(cancelled, args)


async def _host(config: HostedConfig, args: argparse.Namespace) -> int:
    async with ArenaClient(config.address, operator_token=config.operator_token) as client:
        await client.connected()
        launch = Launch(client, config)
        try:
            created = await launch.start()
        except BotFailedToStart as error:
            print_error("cardarena tournament", str(error))
            return 2
        print(f"tournament {created.tournament_id} created on {config.address}", file=sys.stderr)
        code = await _watch(client, args, created.tournament_id, launch)
        if code != EXIT_DETACHED:
            await launch.stop_bots()
        return code


def bot_stopped(bot: BotEntry, code: int) -> None:
    """A bot's process ended with an error while the tournament runs: its seats are then
    played by their clocks (and forfeit), which should not go unnoticed."""
    print(
        f"\nbot {bot.name} stopped (exit status {code}); its seats are played by their clocks"
        " (--bot-logs DIR keeps what it said)",
        file=sys.stderr,
    )


async def _attach(args: argparse.Namespace, tournament_id: str) -> int:
    async with ArenaClient(args.server, operator_token=args.operator_token) as client:
        await client.connected()
        return await _watch(client, args, tournament_id)


async def _watch(
    client: ArenaClient,
    args: argparse.Namespace,
    tournament_id: str,
    launch: Launch | None = None,
) -> int:
    update = LiveProgress(enabled=False if args.no_progress else None)
    try:
        if launch is not None:
            await launch.follow(update, bot_stopped)
        else:
            await follow(client, tournament_id, update)
    except (KeyboardInterrupt, asyncio.CancelledError):
        update.close()
        print(
            f"\ndetached: tournament {tournament_id} goes on on the server. Follow it again:"
            f" cardarena tournament --server {args.server} --attach {tournament_id};"
            f" end it: cardarena tournament --server {args.server} --cancel {tournament_id}",
            file=sys.stderr,
        )
        await write_results(client, args, tournament_id)
        return EXIT_DETACHED
    update.close()
    info = await write_results(client, args, tournament_id)
    print_hosted(info, sys.stdout)
    return EXIT_FAILED_MATCHES if info.failed else EXIT_OK


async def write_results(
    client: ArenaClient, args: argparse.Namespace, tournament_id: str
) -> tpb.TournamentInfo:
    """The results as the server has them now, with the match lines, to the files asked for:
    ``args.json`` the results file ``cardarena audit --results`` takes (signed by the
    server once the tournament ended), ``args.csv`` the standings."""
    info = await client.tournaments.get(tournament_id, matches=True)
    if args.json is not None:
        with writing(args.json):
            args.json.write_text(json.dumps(hosted_json(info, server=args.server), indent=2) + "\n")
    if args.csv is not None:
        with writing(args.csv):
            write_hosted_csv(args.csv, info)
    return info
