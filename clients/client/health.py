"""One Check call of the standard gRPC health protocol (grpc.health.v1), as an exit status.

Why the standard protocol and nothing of cardarena's own: it then works against any cardarena
server whatever its version, which is what container health checks and scripts need. The
statuses are those ``cardarena health`` exits with: 0 SERVING, 1 anything else the server
answers (NOT_SERVING while draining, an unknown service), 2 unreachable in time.
"""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2

EXIT_SERVING = 0
EXIT_NOT_SERVING = 1
EXIT_UNREACHABLE = 2

MATCH_SERVICE = "cardarena.v1.MatchService"
UNREACHABLE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


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
