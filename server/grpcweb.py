"""A small gRPC-Web gateway: HTTP/1.1 from browsers in, the local gRPC server out.

Browsers cannot speak gRPC's HTTP/2 trailers, so gRPC-Web carries each message in a frame
(one flag byte, a 4-byte big-endian length, the bytes) and the status in a last frame whose
flag byte is 0x80 (``grpc-status:0\\r\\ngrpc-message:\\r\\n``). With
``application/grpc-web-text`` the body is base64 both ways. Only unary and server-streaming
calls exist in gRPC-Web; ``Play`` (bidirectional) answers UNIMPLEMENTED.

The gateway forwards raw bytes through a ``grpc.aio`` channel with generic method handlers
(no decoding: the server checks every message), passes ``authorization`` through, answers
CORS preflights and serves the static web app from a directory.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import mimetypes
import struct
import urllib.parse
from pathlib import Path

import grpc
import structlog

from cardarena.v1 import service_pb2

SERVICE = service_pb2.DESCRIPTOR.services_by_name["MatchService"]
# "/cardarena.v1.MatchService/ListMatches" -> server streaming?
METHODS: dict[str, bool] = {
    f"/{SERVICE.full_name}/{method.name}": method.server_streaming
    for method in SERVICE.methods
    if not method.client_streaming
}
ALL_METHODS = {f"/{SERVICE.full_name}/{method.name}" for method in SERVICE.methods}
MAX_BODY = 256 * 1024
MAX_HEADER_LINES = 100
UNARY_TIMEOUT = 30.0
CORS_HEADERS = (
    ("Access-Control-Allow-Origin", "*"),
    ("Access-Control-Expose-Headers", "grpc-status, grpc-message"),
)
PREFLIGHT_HEADERS = (
    ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
    (
        "Access-Control-Allow-Headers",
        "content-type, authorization, x-grpc-web, x-user-agent, grpc-timeout",
    ),
    ("Access-Control-Max-Age", "600"),
)
STATIC_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css"}

log = structlog.get_logger("cardarena.grpcweb")


class BadRequest(Exception):
    """The HTTP request cannot be answered; the connection is closed after a 400."""


def frame(payload: bytes, flags: int = 0) -> bytes:
    return struct.pack(">BI", flags, len(payload)) + payload


def trailer_frame(code: grpc.StatusCode, message: str) -> bytes:
    text = f"grpc-status:{code.value[0]}\r\n"
    if message:
        text += f"grpc-message:{urllib.parse.quote(message, safe=' ')}\r\n"
    return frame(text.encode("ascii"), 0x80)


def first_message(body: bytes) -> bytes:
    """The one request message of a gRPC-Web body (frames after it are ignored)."""
    if len(body) < 5:
        raise BadRequest("a gRPC-Web body needs a 5-byte frame header")
    flags, length = struct.unpack(">BI", body[:5])
    if flags & 0x01:
        raise BadRequest("compressed messages are not supported")
    if len(body) < 5 + length:
        raise BadRequest("truncated gRPC-Web frame")
    return body[5 : 5 + length]


def parse_timeout(value: str) -> float | None:
    """``grpc-timeout: 10S`` -> 10.0; None when absent or unreadable."""
    units = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}
    if len(value) < 2 or not value[:-1].isdigit() or value[-1] not in units:
        return None
    return int(value[:-1]) * units[value[-1]]


class Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("malformed request line")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, sep, value = raw.decode("latin-1").partition(":")
        if not sep:
            raise BadRequest("malformed header")
        headers[name.strip().lower()] = value.strip()
    else:
        raise BadRequest("too many headers")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise BadRequest("chunked request bodies are not supported")
    length = int(headers.get("content-length", "0") or "0")
    if length < 0 or length > MAX_BODY:
        raise BadRequest("request body too large")
    body = await reader.readexactly(length) if length else b""
    return Request(parts[0].upper(), parts[1], headers, body)


class GrpcWebGateway:
    """Listen with :meth:`start`; ``port`` is the bound port."""

    def __init__(self, target: str, static_dir: Path | None) -> None:
        self.target = target
        self.static_dir = static_dir.resolve() if static_dir is not None else None
        self.port = 0
        self._channel: grpc.aio.Channel | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        self._channel = grpc.aio.insecure_channel(self.target)
        self._server = await asyncio.start_server(self._serve_connection, host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._channel is not None:
            await self._channel.close()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    request = await read_request(reader)
                except (BadRequest, ValueError) as error:
                    await self._respond(writer, 400, "text/plain", str(error).encode(), close=True)
                    return
                if request is None:
                    return
                keep = await self._handle(request, reader, writer)
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _respond(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        content_type: str,
        body: bytes,
        *,
        extra: tuple[tuple[str, str], ...] = (),
        close: bool = False,
    ) -> None:
        reasons = {
            200: "OK",
            204: "No Content",
            400: "Bad Request",
            404: "Not Found",
            405: "Method Not Allowed",
        }
        head = [f"HTTP/1.1 {status} {reasons.get(status, 'Error')}"]
        headers = [*CORS_HEADERS, *extra, ("Content-Length", str(len(body)))]
        if content_type:
            headers.append(("Content-Type", content_type))
        if close:
            headers.append(("Connection", "close"))
        head += [f"{name}: {value}" for name, value in headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()

    async def _handle(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        if request.method == "OPTIONS":
            await self._respond(writer, 204, "", b"", extra=PREFLIGHT_HEADERS)
            return True
        content_type = request.headers.get("content-type", "")
        if request.method == "POST" and content_type.startswith("application/grpc-web"):
            await self._call(request, reader, writer, content_type)
            return False
        if request.method in ("GET", "HEAD"):
            await self._static(request, writer)
            return True
        await self._respond(writer, 405, "text/plain", b"method not allowed\n")
        return True

    async def _static(self, request: Request, writer: asyncio.StreamWriter) -> None:
        path = urllib.parse.unquote(request.path)
        if self.static_dir is None:
            await self._respond(writer, 404, "text/plain", b"no web app configured\n")
            return
        relative = path.lstrip("/") or "index.html"
        candidate = (self.static_dir / relative).resolve()
        if candidate.is_dir():
            candidate = candidate / "index.html"
        if not candidate.is_relative_to(self.static_dir) or not candidate.is_file():
            await self._respond(writer, 404, "text/plain", b"not found\n")
            return
        kind = STATIC_TYPES.get(candidate.suffix) or mimetypes.guess_type(candidate.name)[0]
        body = candidate.read_bytes()
        await self._respond(
            writer,
            200,
            kind or "application/octet-stream",
            b"" if request.method == "HEAD" else body,
            extra=(("Cache-Control", "no-cache"),),
        )

    async def _call(
        self,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        content_type: str,
    ) -> None:
        text = content_type.startswith("application/grpc-web-text")
        reply_type = "application/grpc-web-text" if text else "application/grpc-web+proto"
        head = (
            "HTTP/1.1 200 OK\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in CORS_HEADERS)
            + f"Content-Type: {reply_type}\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\nCache-Control: no-cache\r\n\r\n"
        )
        writer.write(head.encode("latin-1"))

        def send(data: bytes) -> None:
            if text:
                data = base64.b64encode(data)
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        def finish(code: grpc.StatusCode, message: str) -> None:
            send(trailer_frame(code, message))
            writer.write(b"0\r\n\r\n")

        path = request.path
        try:
            body = base64.b64decode(request.body, validate=False) if text else request.body
            message = first_message(body)
        except (BadRequest, ValueError) as error:
            finish(grpc.StatusCode.INVALID_ARGUMENT, str(error))
            await writer.drain()
            return
        if path not in METHODS:
            known = path in ALL_METHODS
            finish(
                grpc.StatusCode.UNIMPLEMENTED,
                f"{path} is not available over gRPC-Web" if known else f"unknown method {path}",
            )
            await writer.drain()
            return
        metadata: list[tuple[str, str]] = []
        if "authorization" in request.headers:
            metadata.append(("authorization", request.headers["authorization"]))
        timeout = parse_timeout(request.headers.get("grpc-timeout", ""))
        assert self._channel is not None
        code, details = grpc.StatusCode.OK, ""
        if METHODS[path]:
            streaming: grpc.aio.UnaryStreamMultiCallable[bytes, bytes]
            streaming = self._channel.unary_stream(path)
            call = streaming(message, metadata=metadata, timeout=timeout)
            # A closed browser connection (an aborted fetch) ends the call.
            watcher = asyncio.create_task(reader.read(1))
            watcher.add_done_callback(lambda _: call.cancel())
            try:
                async for reply in call:
                    assert isinstance(reply, bytes)
                    send(frame(reply))
                    await writer.drain()
            except grpc.aio.AioRpcError as error:
                code, details = error.code(), error.details() or ""
            except asyncio.CancelledError:
                if not watcher.done():
                    raise
                return  # the browser went away
            finally:
                watcher.cancel()
            if call.cancelled():
                return
        else:
            unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
            unary = self._channel.unary_unary(path)
            try:
                reply = await unary(message, metadata=metadata, timeout=timeout or UNARY_TIMEOUT)
                assert isinstance(reply, bytes)
                send(frame(reply))
            except grpc.aio.AioRpcError as error:
                code, details = error.code(), error.details() or ""
        finish(code, details)
        await writer.drain()
