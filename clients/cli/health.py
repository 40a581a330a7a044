"""``cardarena health``: ask a server's gRPC health service (grpc.health.v1) whether it serves.

Exits 0 when the service is SERVING, 1 when the server answers anything else (NOT_SERVING while
draining, an unknown service name, ...), 2 on a usage error or when the server cannot be reached
in time. Made for container health checks and scripts; it talks only the standard health
protocol, so it works against any cardarena server whatever its version.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from ..client.health import EXIT_SERVING, MATCH_SERVICE, check
from .argtypes import seconds, server_address

MAX_TIMEOUT_S = 3600.0


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """ask a server's gRPC health service whether it serves (exit 0 SERVING, 1 not, 2 unreachable)"""
    parser.add_argument(
        "--server",
        type=server_address,
        default=os.environ.get("CARDARENA_SERVER", "127.0.0.1:50051"),
        metavar="HOST:PORT",
        help="HOST:PORT of the server (default: $CARDARENA_SERVER or 127.0.0.1:50051)",
    )
    parser.add_argument(
        "--service",
        default="",
        metavar="NAME",
        help=f'the service to ask about: "" for the whole server (default) or {MATCH_SERVICE}',
    )
    parser.add_argument(
        "--timeout",
        type=seconds(MAX_TIMEOUT_S),
        default=3.0,
        metavar="S",
        help=f"give up after this many seconds, at most {MAX_TIMEOUT_S:g} (default: %(default)g)",
    )

    def run(args: argparse.Namespace) -> int:
        status, detail = check(args.server, args.service, args.timeout)
        stream = sys.stdout if status == EXIT_SERVING else sys.stderr
        print(
            f"cardarena {name}: {args.server} {args.service or '(server)'}: {detail}", file=stream
        )
        return status

    return run
