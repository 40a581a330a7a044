"""Where a command reads a match log from: ``LOGFILE``, or ``--server HOST:PORT --match ID``.

Shared by ``cardarena audit`` and ``cardarena replay`` so both accept the same input and
refuse bad input the same way (usage errors exit 2, like every argparse error); and by
``audit`` and ``cardarena log``, :func:`unavailable_as`: a log that cannot be had, the
server's refusal, or its absence, is one line and an exit status.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable

import grpc

from cardarena.v1 import service_pb2 as spb

from ..client import Unreachable
from ..logs import LogUnavailable, fetch_log, load_log
from ..tournament.terminal import print_error
from .argtypes import server_address


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logfile", nargs="?", metavar="LOGFILE", help="a match log file (.pb or .json)"
    )
    parser.add_argument(
        "--server",
        type=server_address,
        metavar="HOST:PORT",
        help="fetch the log from this server (or these replicas, comma-separated)",
    )
    parser.add_argument("--match", metavar="ID", help="the match to fetch (with --server)")


def read_source(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> tuple[spb.GetMatchLogResponse, str | None]:
    """The log, and the match id the user asked for (``None`` for a file: it names its own).

    Raises :class:`~cardarena.clients.logs.LogUnavailable` when the input cannot be read.
    """
    remote = args.server is not None or args.match is not None
    if args.logfile is not None and remote:
        parser.error("give either LOGFILE or --server and --match, not both")
    if args.logfile is not None:
        return load_log(args.logfile), None
    if args.server is None or args.match is None:
        parser.error("give LOGFILE, or both --server HOST:PORT and --match ID")
    return asyncio.run(fetch_log(args.server, args.match)), args.match


def unavailable_as(command: str, status: int, run: Callable[[], int]) -> int:
    """``run()``; where a log could not be had or the server refused, one line on stderr
    (``command: why``) and exit ``status`` instead of a traceback."""
    try:
        return run()
    except (LogUnavailable, Unreachable) as error:
        print_error(command, str(error))
    except grpc.aio.AioRpcError as error:
        print_error(command, f"{error.code().name}: {error.details()}")
    return status
