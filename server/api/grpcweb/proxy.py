"""Forwarding one gRPC-Web call to the gRPC server and relaying its answer.

The gateway does not decode messages: it passes the raw bytes through a ``grpc.aio`` channel
with generic method handlers, so the server checks every message, as it does on its own port.
What the gateway refuses itself (a method gRPC-Web cannot carry, a malformed frame or
deadline, non-ASCII credentials) it answers with a gRPC status before the server sees the
call. Only unary and server-streaming calls exist in gRPC-Web; ``Play`` (bidirectional)
answers UNIMPLEMENTED.
"""

from __future__ import annotations

import asyncio
import base64
import re
from dataclasses import dataclass

import grpc

from cardarena.v1 import ladder_pb2, service_pb2, tournament_pb2

from ..limits import WEB_CLIENT
from .connection import Connection
from .frames import Refused, Reply, first_message
from .http import Request

# The browser app watches matches, tournaments and ladders: the three services pass the
# gateway.
SERVICES = (
    service_pb2.DESCRIPTOR.services_by_name["MatchService"],
    tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"],
    ladder_pb2.DESCRIPTOR.services_by_name["LadderService"],
)
# "/cardarena.v1.MatchService/ListMatches" -> server streaming?
METHODS: dict[str, bool] = {
    f"/{service.full_name}/{method.name}": method.server_streaming
    for service in SERVICES
    for method in service.methods
    if not method.client_streaming
}
ALL_METHODS = {
    f"/{service.full_name}/{method.name}" for service in SERVICES for method in service.methods
}
# gRPC allows 8 digits of hours; nobody needs a deadline longer than a day.
MAX_GRPC_TIMEOUT = 24 * 3600.0
UNARY_TIMEOUT = 30.0
# gRPC metadata values (authorization) are printable ASCII only.
PRINTABLE = re.compile(r"[\x20-\x7e]*")
GRPC_TIMEOUT = re.compile(r"([0-9]{1,8})([HMSmun])")
TIMEOUT_UNITS = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}


def parse_timeout(value: str) -> float | None:
    """``grpc-timeout: 10S`` -> 10.0; None when absent. A malformed or absurd value is refused
    rather than ignored: the client asked for a deadline it would not get."""
    if not value:
        return None
    match = GRPC_TIMEOUT.fullmatch(value)
    if match is None:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, f"malformed grpc-timeout {value[:20]!r}")
    seconds = int(match[1]) * TIMEOUT_UNITS[match[2]]
    if seconds > MAX_GRPC_TIMEOUT:
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"grpc-timeout {value} is longer than the gateway's maximum of 24H",
        )
    return seconds


@dataclass(frozen=True)
class Call:
    """A gRPC-Web request checked and ready to forward."""

    path: str
    message: bytes
    metadata: tuple[tuple[str, str], ...]
    timeout: float | None


def prepare_call(request: Request, max_message: int, vouched: str | None = None) -> Call:
    """Everything the gateway refuses itself, before the server sees the call; ``vouched``,
    the :data:`~..limits.WEB_CLIENT` value that names its browser to the server's limits."""
    path = request.path
    if path not in METHODS:
        known = path in ALL_METHODS
        raise Refused(
            grpc.StatusCode.UNIMPLEMENTED,
            f"{path} is not available over gRPC-Web" if known else f"unknown method {path[:200]}",
        )
    try:
        body = base64.b64decode(request.body, validate=False) if request.text else request.body
    except ValueError as error:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
    message = first_message(body, max_message)
    metadata: tuple[tuple[str, str], ...] = ()
    if "authorization" in request.headers:
        value = request.headers["authorization"]
        if not PRINTABLE.fullmatch(value):
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED,
                "authorization must be printable ASCII: 'Bearer <token>'",
            )
        metadata = (("authorization", value),)
    if vouched is not None:
        metadata = (*metadata, (WEB_CLIENT, vouched))
    timeout = parse_timeout(request.headers.get("grpc-timeout", ""))
    return Call(path, message, metadata, timeout)


async def forward(
    channel: grpc.aio.Channel, request: Request, conn: Connection, vouched: str | None
) -> None:
    """Answer one gRPC-Web request: refused here, or relayed from the server (``vouched``,
    when given, sent as ``WEB_CLIENT``: the gateway's word for the browser's address)."""
    reply = Reply(conn.writer, request.text)
    reply.start()
    try:
        call = prepare_call(request, conn.max_message_bytes, vouched)
    except Refused as refused:
        reply.finish(refused.code, refused.message)
        await conn.drain()
        return
    if METHODS[call.path]:
        status = await _stream(channel, call, reply, conn)
        if status is None:
            return  # the browser went away
    else:
        status = await _unary(channel, call, reply)
    reply.finish(*status)
    await conn.drain()


async def _unary(
    channel: grpc.aio.Channel, call: Call, reply: Reply
) -> tuple[grpc.StatusCode, str]:
    unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
    unary = channel.unary_unary(call.path)
    timeout = UNARY_TIMEOUT if call.timeout is None else call.timeout
    try:
        response = await unary(call.message, metadata=call.metadata, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    assert isinstance(response, bytes)
    reply.message(response)
    return grpc.StatusCode.OK, ""


async def _stream(
    channel: grpc.aio.Channel, call: Call, reply: Reply, conn: Connection
) -> tuple[grpc.StatusCode, str] | None:
    """Relay a server stream; None when the browser closed the connection first."""
    streaming: grpc.aio.UnaryStreamMultiCallable[bytes, bytes]
    streaming = channel.unary_stream(call.path)
    stream = streaming(call.message, metadata=call.metadata, timeout=call.timeout)
    # A closed browser connection (an aborted fetch) ends the call.
    watcher = asyncio.create_task(conn.reader.read(1))

    def hung_up(task: asyncio.Task[bytes]) -> None:
        if not task.cancelled():
            task.exception()  # a reset connection is no error here: retrieve, ignore
        stream.cancel()

    watcher.add_done_callback(hung_up)
    try:
        async for response in stream:
            assert isinstance(response, bytes)
            reply.message(response)
            await conn.drain()
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    except asyncio.CancelledError:
        if not watcher.done():
            raise
        return None
    finally:
        watcher.cancel()
        if not stream.done():
            stream.cancel()  # the client stopped reading: end the server's stream too
    return None if stream.cancelled() else (grpc.StatusCode.OK, "")
