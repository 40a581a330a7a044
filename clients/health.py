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

import grpc
from grpc_health.v1 import health_pb2

EXIT_SERVING = 0
EXIT_NOT_SERVING = 1
EXIT_UNREACHABLE = 2

MATCH_SERVICE = "cardarena.v1.MatchService"
UNREACHABLE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.add_argument(
        "--server",
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
        type=positive_seconds,
        default=3.0,
        metavar="S",
        help="give up after this many seconds (default: 3)",
    )

    def run(args: argparse.Namespace) -> int:
        status, detail = check(args.server, args.service, args.timeout)
        stream = sys.stdout if status == EXIT_SERVING else sys.stderr
        print(
            f"cardarena {name}: {args.server} {args.service or '(server)'}: {detail}", file=stream
        )
        return status

    return run


def check(server: str, service: str, timeout: float) -> tuple[int, str]:
    """One Check call: (exit status, what the server said or why it could not)."""
    with grpc.insecure_channel(server) as channel:
        health = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        try:
            response = health(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as error:
            code: grpc.StatusCode = error.code()
            details: str = error.details() or ""
            status = EXIT_UNREACHABLE if code in UNREACHABLE_CODES else EXIT_NOT_SERVING
            return status, f"{code.name} {details}".rstrip()
    state = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    if response.status == health_pb2.HealthCheckResponse.SERVING:
        return EXIT_SERVING, state
    return EXIT_NOT_SERVING, state
