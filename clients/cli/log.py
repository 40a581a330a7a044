"""``cardarena log fetch`` and ``cardarena log keys``: match logs as files, and the keys that
sign them.

``fetch`` writes logs in the format of docs/log-files.md: one ``MATCH_ID.pb`` (or ``.json``)
per match, the server's ``GetMatchLogResponse`` as it came (its signed checkpoint included),
and for a tournament (or a results file) ``tournament.pb`` beside them. ``cardarena audit``
reads every one of them again without the server. ``keys`` prints the server's public keys
(``GetPublicKeys``), current first, in the form ``audit --key`` reads: compare them with the
key the operator published before trusting them. Exit codes: 0 done, 1 some log could not be
fetched (the others are written), 2 nothing could be (or the command was misused).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient, check_address
from ..logs import LogUnavailable
from ..logs.bundle import fetch_logs, save_logs, save_tournament
from ..logs.results import load_results
from ..tournament.terminal import print_error
from .argtypes import output_dir, server_address, writing
from .logsource import unavailable_as

EXIT_OK, EXIT_SOME_MISSING, EXIT_FAILED = 0, 1, 2


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """fetch match logs as files (log fetch), print the server's signing keys (log keys)"""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = actions.add_parser(
        "fetch",
        help="write match logs (and a tournament) as files for cardarena audit",
        description="Write match logs as files (docs/log-files.md): each match's"
        " GetMatchLogResponse as MATCH_ID.pb (or .json), its signed checkpoint included, and"
        " for a tournament or a results file tournament.pb beside them; cardarena audit reads"
        " them again without the server.",
    )
    _server(fetch, "a results file's server, else $CARDARENA_SERVER or 127.0.0.1:50051")
    which = fetch.add_mutually_exclusive_group(required=True)
    which.add_argument("--match", metavar="ID", action="append", help="a match (repeatable)")
    which.add_argument("--tournament", metavar="ID", help="every match of a hosted tournament")
    which.add_argument("--results", type=Path, metavar="FILE", help="every match of a results file")
    fetch.add_argument(
        "--out",
        type=output_dir,
        default=".",
        metavar="DIR",
        help="where to write, made if missing (default: %(default)s)",
    )
    fetch.add_argument(
        "--json", action="store_true", help="write .json (protobuf JSON) instead of .pb"
    )
    keys = actions.add_parser(
        "keys",
        help="print the server's public keys, current first",
        description="Print the server's public keys (GetPublicKeys), current first, one a line"
        " as ed25519:HEX, the form audit --key reads: compare them with the key the operator"
        " published before trusting them.",
    )
    _server(keys, "$CARDARENA_SERVER or 127.0.0.1:50051")

    def run(args: argparse.Namespace) -> int:
        action = _keys if args.action == "keys" else _fetch
        return unavailable_as("cardarena log", EXIT_FAILED, lambda: asyncio.run(action(args)))

    return run


def _server(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--server",
        type=server_address,
        default=None,
        metavar="HOST:PORT",
        help=f"the server (default: {default})",
    )


def _address(args: argparse.Namespace, recorded: str = "", where: str = "") -> str:
    """The server to ask: ``--server``, else the one a results file recorded (checked as
    ``--server`` would be), else ``$CARDARENA_SERVER``, else the local default."""
    if args.server:
        return str(args.server)
    address, source = recorded, where
    if not address:
        address, source = os.environ.get("CARDARENA_SERVER", ""), "$CARDARENA_SERVER"
    if not address:
        return "127.0.0.1:50051"
    try:
        return check_address(address)
    except ValueError as error:
        raise LogUnavailable(f"the server of {source}: {error}; give --server") from None


async def _keys(args: argparse.Namespace) -> int:
    async with ArenaClient(_address(args)) as client:
        await client.connected()
        response: spb.GetPublicKeysResponse = await client.stub.GetPublicKeys(
            spb.GetPublicKeysRequest(), timeout=client.timeout
        )
    for n, key in enumerate(response.keys):
        note = "current" if n == 0 else "earlier"
        print(f"ed25519:{key.public_key.hex()}  # key id {key.key_id}, {note}")
    return EXIT_OK


async def _fetch(args: argparse.Namespace) -> int:
    suffix = "json" if args.json else "pb"
    recorded = ""
    if args.results is not None:
        results = load_results(args.results)
        recorded = results.server
    async with ArenaClient(_address(args, recorded, str(args.results))) as client:
        await client.connected()
        info: tpb.TournamentInfo | None = None
        if args.match:
            match_ids = list(args.match)
        else:
            tournament_id = args.tournament or results.tournament_id
            info = await client.tournaments.get(tournament_id, matches=True)
            match_ids = [m.match_id for m in info.matches if m.match_id]
        logs = await fetch_logs(client, match_ids)
    with writing(args.out):
        written = save_logs(logs, args.out, suffix)
        if info is not None:
            written.append(save_tournament(info, args.out, suffix))
    missing = [log for log in logs.values() if isinstance(log, LogUnavailable)]
    for problem in missing:
        print_error("cardarena log", str(problem))
    print(f"{len(logs) - len(missing)} of {len(logs)} logs written to {args.out}")
    if missing:
        return EXIT_FAILED if len(missing) == len(logs) else EXIT_SOME_MISSING
    return EXIT_OK
