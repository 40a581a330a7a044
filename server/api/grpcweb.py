"""A small gRPC-Web gateway: HTTP/1.1 from browsers in, the local gRPC server out.

Browsers cannot speak gRPC's HTTP/2 trailers, so gRPC-Web carries each message in a frame
(one flag byte, a 4-byte big-endian length, the bytes) and the status in a last frame whose
flag byte is 0x80 (``grpc-status:0\\r\\ngrpc-message:\\r\\n``). With
``application/grpc-web-text`` the body is base64 both ways. Only unary and server-streaming
calls exist in gRPC-Web; ``Play`` (bidirectional) answers UNIMPLEMENTED.

The gateway forwards raw bytes through a ``grpc.aio`` channel with generic method handlers
(no decoding: the server checks every message), passes ``authorization`` through, answers
CORS preflights and serves the static web app from a directory.

It faces strangers, so it bounds what any client can hold, as a mature HTTP server does: at
most ``max_connections`` at once (beyond that a connection gets a 503 and is closed unread,
keeping the process well below its file descriptor limit), the whole request head within
``header_timeout``, the body and every write within ``read_timeout``, a request line of
``MAX_REQUEST_LINE`` bytes (414) and a head of ``MAX_HEAD_BYTES`` or ``MAX_HEADER_LINES`` lines
(431). A body may hold one message of at most ``MAX_MESSAGE_BYTES``: a larger Content-Length or
chunk size is refused with RESOURCE_EXHAUSTED before any of it is read. Conditions a flood
repeats (the cap, failing accepts, refused requests) log one line per ``log_interval``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import mimetypes
import re
import socket
import struct
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
MAX_MESSAGE_BYTES = 256 * 1024
"""The largest message the server reads, on the gRPC port (``server.app`` imports it) and
here: one limit for both."""
MAX_REQUEST_LINE = 4096
MAX_HEAD_BYTES = 16 * 1024
MAX_HEADER_LINES = 100
MAX_CONNECTIONS = 256
HEADER_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
LOG_INTERVAL = 10.0
# After an answer sent before the request was read to its end: how long to discard what the
# client still sends, so that closing does not reset the connection before it reads the answer.
LINGER_SECONDS = 2.0
ACCEPT_BACKOFF = (0.05, 1.0)
# gRPC allows 8 digits of hours; nobody needs a deadline longer than a day.
MAX_GRPC_TIMEOUT = 24 * 3600.0
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
REASONS = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    413: "Content Too Large",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    503: "Service Unavailable",
}
# Written straight to a connection beyond the cap, which is never read.
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nAccess-Control-Allow-Origin: *\r\n"
    b"Retry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
)
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
VISIBLE = re.compile(rb"[\x21-\x7e]+")
# RFC 9110 field values: visible ASCII, space, tab and obs-text; never a control byte.
FIELD_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# gRPC metadata values (authorization) are printable ASCII only.
PRINTABLE = re.compile(r"[\x20-\x7e]*")
DIGITS = re.compile(r"[0-9]{1,18}")
CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")
GRPC_TIMEOUT = re.compile(r"([0-9]{1,8})([HMSmun])")
TIMEOUT_UNITS = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}
# Headers whose repetition could make the gateway and the server read a request differently.
SINGLE_HEADERS = {"content-length", "transfer-encoding", "content-type", "authorization"}


class BadRequest(Exception):
    """The HTTP request cannot be answered; the connection closes after ``status``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class TooLarge(Exception):
    """The body would pass the limit: refused before the rest of it is read."""

    def __init__(self, request: Request) -> None:
        super().__init__("request body too large")
        self.request = request


class Refused(Exception):
    """A gRPC-Web call the gateway answers itself, with this status, without the server."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class LogThrottle:
    """At most one log line per event name and ``interval``: a flood of one condition (an
    exhausted file table, a connection storm, a fuzzer) must not flood stderr as well. The
    next line after the interval says how many were suppressed in between."""

    def __init__(
        self, logger: Any, interval: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def log(self, level: str, event: str, **fields: object) -> None:
        now = self.clock()
        last = self._last.get(event)
        if last is not None and now - last < self.interval:
            self._suppressed[event] = self._suppressed.get(event, 0) + 1
            return
        self._last[event] = now
        suppressed = self._suppressed.pop(event, 0)
        getattr(self.logger, level)(event, suppressed=suppressed, **fields)


def frame(payload: bytes, flags: int = 0) -> bytes:
    return struct.pack(">BI", flags, len(payload)) + payload


def trailer_frame(code: grpc.StatusCode, message: str) -> bytes:
    text = f"grpc-status:{code.value[0]}\r\n"
    if message:
        text += f"grpc-message:{urllib.parse.quote(message, safe=' ')}\r\n"
    return frame(text.encode("ascii"), 0x80)


def first_message(body: bytes, max_message: int = MAX_MESSAGE_BYTES) -> bytes:
    """The one request message of a gRPC-Web body (frames after it are ignored)."""
    if len(body) < 5:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "a gRPC-Web body needs a 5-byte header")
    flags, length = struct.unpack(">BI", body[:5])
    if flags & 0x01:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "compressed messages are not supported")
    if length > max_message:
        raise Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, too_large(max_message))
    if len(body) < 5 + length:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "truncated gRPC-Web frame")
    return body[5 : 5 + length]


def too_large(max_message: int) -> str:
    return f"request message larger than the limit of {max_message} bytes"


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


def parse_request_line(line: bytes) -> tuple[str, str]:
    """``(METHOD, target)``; the target is visible ASCII and its path has no control byte
    (a ``%00`` must not reach a file system call)."""
    if len(line) > MAX_REQUEST_LINE:
        raise BadRequest("request line too long", 414)
    parts = line.rstrip(b"\r\n").split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        raise BadRequest("malformed request line")
    method, target = parts[0], parts[1]
    if not TOKEN.fullmatch(method) or not VISIBLE.fullmatch(target):
        raise BadRequest("malformed request line")
    text = target.decode("ascii")
    if CONTROL.search(urllib.parse.unquote(urllib.parse.urlsplit(text).path)):
        raise BadRequest("control character in the path")
    return method.decode("ascii").upper(), text


def parse_header(line: bytes) -> tuple[str, str]:
    """``(lower-case name, value)``; a control byte anywhere is refused (no header smuggling,
    nothing gRPC would reject as metadata later)."""
    raw = line[:-2] if line.endswith(b"\r\n") else line[:-1]
    name, sep, value = raw.partition(b":")
    if not sep or not TOKEN.fullmatch(name):
        raise BadRequest("malformed header")
    value = value.strip(b" \t")
    if FIELD_CONTROL.search(value):
        raise BadRequest(f"control character in header {name.decode('ascii')}")
    return name.decode("ascii").lower(), value.decode("latin-1")


async def read_line(reader: asyncio.StreamReader, status: int) -> bytes:
    """One line; longer than the reader's limit is ``status`` (414 or 431)."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise BadRequest("request line or header too long", status) from None


class Request:
    def __init__(
        self, method: str, target: str, headers: dict[str, str], body: bytes = b""
    ) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path

    @property
    def grpc_web(self) -> bool:
        return self.method == "POST" and self.content_type.startswith("application/grpc-web")

    @property
    def text(self) -> bool:
        return self.content_type.startswith("application/grpc-web-text")

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


async def read_head(reader: asyncio.StreamReader) -> Request | None:
    """The request line and headers; None when the client closed between requests."""
    try:
        line = await read_line(reader, 414)
    except asyncio.IncompleteReadError as error:
        if not error.partial:
            return None
        raise
    method, target = parse_request_line(line)
    headers: dict[str, str] = {}
    size = len(line)
    while (line := await read_line(reader, 431)) not in (b"\r\n", b"\n"):
        size += len(line)
        if size > MAX_HEAD_BYTES or len(headers) >= MAX_HEADER_LINES:
            raise BadRequest("request header fields too large", 431)
        name, value = parse_header(line)
        if name in headers and name in SINGLE_HEADERS:
            raise BadRequest(f"repeated header {name}")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return Request(method, target, headers)


def content_length(headers: dict[str, str]) -> int | None:
    """The body's declared length; None for a chunked body."""
    if "transfer-encoding" in headers:
        if "content-length" in headers:
            raise BadRequest("both Content-Length and Transfer-Encoding")
        if headers["transfer-encoding"].lower() != "chunked":
            raise BadRequest("only the chunked transfer encoding is supported", 501)
        return None
    value = headers.get("content-length", "0")
    if not DIGITS.fullmatch(value):
        raise BadRequest("malformed Content-Length")
    return int(value)


def body_limit(request: Request, max_message: int) -> int:
    """The most a body may hold: one frame of the largest message, in base64 for -text."""
    framed = 5 + max_message
    return 4 * -(-framed // 3) if request.text else framed


async def read_chunked(reader: asyncio.StreamReader, request: Request, limit: int) -> bytes:
    """A chunked body, refused as soon as a chunk's size would pass ``limit``: that chunk is
    never read."""
    body = bytearray()
    while True:
        size_text = (await read_line(reader, 400)).split(b";", 1)[0].strip()
        if not CHUNK_SIZE.fullmatch(size_text):
            raise BadRequest("malformed chunk size")
        size = int(size_text, 16)
        if size == 0:
            break
        if len(body) + size > limit:
            raise TooLarge(request)
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise BadRequest("malformed chunk")
    for _ in range(MAX_HEADER_LINES):  # trailer fields, ignored
        if await read_line(reader, 431) in (b"\r\n", b"\n"):
            return bytes(body)
    raise BadRequest("too many trailer fields", 431)


@dataclass(frozen=True)
class Call:
    """A gRPC-Web request checked and ready to forward."""

    path: str
    message: bytes
    metadata: tuple[tuple[str, str], ...]
    timeout: float | None


def prepare_call(request: Request, max_message: int) -> Call:
    """Everything the gateway refuses itself, before the server sees the call."""
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
    timeout = parse_timeout(request.headers.get("grpc-timeout", ""))
    return Call(path, message, metadata, timeout)


def listen(host: str, port: int) -> socket.socket:
    """A non-blocking listening socket on the first address ``host`` resolves to."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class GrpcWebGateway:
    """Listen with :meth:`start`; ``port`` is the bound port."""

    def __init__(
        self,
        target: str,
        static_dir: Path | None,
        *,
        max_connections: int = MAX_CONNECTIONS,
        header_timeout: float = HEADER_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        log_interval: float = LOG_INTERVAL,
    ) -> None:
        self.target = target
        self.static_dir = static_dir.resolve() if static_dir is not None else None
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.read_timeout = read_timeout
        self.max_message_bytes = max_message_bytes
        self.port = 0
        self._log = LogThrottle(structlog.get_logger(__name__), log_interval)
        self._channel: grpc.aio.Channel | None = None
        self._socket: socket.socket | None = None
        self._acceptor: asyncio.Task[None] | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        self._channel = grpc.aio.insecure_channel(self.target)
        self._socket = listen(host, port)
        self.port = self._socket.getsockname()[1]
        self._acceptor = asyncio.create_task(self._accept_loop(self._socket))
        return self.port

    async def close(self) -> None:
        if self._acceptor is not None:
            self._acceptor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._acceptor
        if self._socket is not None:
            self._socket.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._channel is not None:
            await self._channel.close()

    async def _accept_loop(self, sock: socket.socket) -> None:
        """Accept for ever. A failing accept (EMFILE: the listening socket stays readable)
        backs off instead of spinning, and logs once per interval, not once per attempt."""
        loop = asyncio.get_running_loop()
        backoff, failures = ACCEPT_BACKOFF[0], 0
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as error:
                failures += 1
                self._log.log(
                    "warning",
                    "web_accept_failed",
                    error=error.strerror,
                    errno=errno.errorcode.get(error.errno or 0, error.errno),
                    retry_seconds=backoff,
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, ACCEPT_BACKOFF[1])
                continue
            if failures:
                self._log.log("info", "web_accept_recovered", failures=failures)
                backoff, failures = ACCEPT_BACKOFF[0], 0
            self._admit(conn)

    def _admit(self, conn: socket.socket) -> None:
        """Serve ``conn``, or, beyond the cap, answer 503 and close it without reading."""
        if len(self._connections) >= self.max_connections:
            self._log.log("warning", "web_connection_limit", limit=self.max_connections)
            with contextlib.suppress(OSError):
                conn.setblocking(False)
                conn.send(BUSY)
            conn.close()
            return
        task = asyncio.create_task(self._open(conn))
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _open(self, conn: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=conn, limit=MAX_HEAD_BYTES)
        except OSError:
            conn.close()
            return
        except asyncio.CancelledError:
            conn.close()
            raise
        await self._serve_connection(reader, writer)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        first = True
        try:
            while await self._serve_one(reader, writer, first):
                first = False
        except (OSError, asyncio.IncompleteReadError):
            pass  # the client went away, or stopped reading (TimeoutError is an OSError)
        except Exception:
            self._log.log("error", "web_connection_failed", exc_info=True)
        finally:
            await self._close(writer)

    async def _close(self, writer: asyncio.StreamWriter) -> None:
        """Close, and drop what a client that does not read still has queued."""
        writer.close()
        try:
            async with asyncio.timeout(LINGER_SECONDS):
                await writer.wait_closed()
        except OSError:
            writer.transport.abort()

    async def _serve_one(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bool
    ) -> bool:
        """Read and answer one request; False when the connection must close."""
        try:
            request = await self._receive(reader, writer, first)
        except BadRequest as error:
            await self._refuse(reader, writer, error.status, str(error))
            return False
        except TooLarge as error:
            await self._refuse_large(error.request, reader, writer)
            return False
        if request is None:
            return False
        keep = await self._handle(request, reader, writer)
        return keep and request.headers.get("connection", "").lower() != "close"

    async def _receive(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bool
    ) -> Request | None:
        """The next request with its body, each within its timeout; None when the client
        closed, or let a kept-alive connection idle past the header timeout."""
        try:
            async with asyncio.timeout(self.header_timeout):
                request = await read_head(reader)
        except TimeoutError:
            if not first:
                return None
            raise BadRequest("request head not received in time", 408) from None
        if request is None:
            return None
        try:
            async with asyncio.timeout(self.read_timeout):
                request.body = await self._read_body(request, reader, writer)
        except TimeoutError:
            raise BadRequest("request body not received in time", 408) from None
        return request

    async def _read_body(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bytes:
        """The body, refused from its declared length before any of it is read."""
        limit = body_limit(request, self.max_message_bytes)
        length = content_length(request.headers)
        if length is not None and length > limit:
            raise TooLarge(request)
        if length != 0 and request.headers.get("expect", "").lower() == "100-continue":
            writer.write(CONTINUE)
            await self._drain(writer)
        if length is None:
            return await read_chunked(reader, request, limit)
        return await reader.readexactly(length) if length else b""

    async def _refuse(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int, reason: str
    ) -> None:
        self._log.log("info", "web_request_refused", status=status, reason=reason)
        await self._respond(writer, status, "text/plain", f"{reason}\n".encode(), close=True)
        await self._linger(reader, writer)

    async def _refuse_large(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """A body over the limit: RESOURCE_EXHAUSTED for a gRPC-Web call, 413 otherwise."""
        if not request.grpc_web:
            await self._refuse(reader, writer, 413, "request body too large")
            return
        self._log.log("info", "web_request_refused", status=413, reason="message too large")
        reply = Reply(writer, request.text)
        reply.start()
        reply.finish(grpc.StatusCode.RESOURCE_EXHAUSTED, too_large(self.max_message_bytes))
        await self._drain(writer)
        await self._linger(reader, writer)

    async def _linger(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Half-close, then discard (never buffer) what the client still sends for a moment,
        so that it reads the answer instead of a connection reset."""
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
            async with asyncio.timeout(LINGER_SECONDS):
                while await reader.read(64 * 1024):
                    pass

    async def _drain(self, writer: asyncio.StreamWriter) -> None:
        """Wait for the client to take what was written, at most ``read_timeout``: a client
        that stops reading must not hold its connection for ever."""
        async with asyncio.timeout(self.read_timeout):
            await writer.drain()

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
        head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}"]
        headers = [*CORS_HEADERS, *extra, ("Content-Length", str(len(body)))]
        if content_type:
            headers.append(("Content-Type", content_type))
        if close:
            headers.append(("Connection", "close"))
        head += [f"{name}: {value}" for name, value in headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await self._drain(writer)

    async def _handle(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        if request.method == "OPTIONS":
            await self._respond(writer, 204, "", b"", extra=PREFLIGHT_HEADERS)
            return True
        if request.grpc_web:
            await self._call(request, reader, writer)
            return False
        if request.method in ("GET", "HEAD"):
            await self._static(request, writer)
            return True
        await self._respond(writer, 405, "text/plain", b"method not allowed\n")
        return True

    def _static_file(self, path: str) -> Path | None:
        """The file under the web root that ``path`` names, if there is one."""
        assert self.static_dir is not None
        relative = urllib.parse.unquote(path).lstrip("/") or "index.html"
        try:
            candidate = (self.static_dir / relative).resolve()
            if candidate.is_dir():
                candidate = candidate / "index.html"
            if candidate.is_relative_to(self.static_dir) and candidate.is_file():
                return candidate
        except (OSError, ValueError):  # a name too long for the file system, say
            pass
        return None

    async def _static(self, request: Request, writer: asyncio.StreamWriter) -> None:
        if self.static_dir is None:
            await self._respond(writer, 404, "text/plain", b"no web app configured\n")
            return
        candidate = self._static_file(request.path)
        if candidate is None:
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
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        reply = Reply(writer, request.text)
        reply.start()
        try:
            call = prepare_call(request, self.max_message_bytes)
        except Refused as refused:
            reply.finish(refused.code, refused.message)
            await self._drain(writer)
            return
        if METHODS[call.path]:
            status = await self._stream(call, reply, reader, writer)
            if status is None:
                return  # the browser went away
        else:
            status = await self._unary(call, reply)
        reply.finish(*status)
        await self._drain(writer)

    async def _unary(self, call: Call, reply: Reply) -> tuple[grpc.StatusCode, str]:
        assert self._channel is not None
        unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
        unary = self._channel.unary_unary(call.path)
        timeout = UNARY_TIMEOUT if call.timeout is None else call.timeout
        try:
            response = await unary(call.message, metadata=call.metadata, timeout=timeout)
        except grpc.aio.AioRpcError as error:
            return error.code(), error.details() or ""
        assert isinstance(response, bytes)
        reply.message(response)
        return grpc.StatusCode.OK, ""

    async def _stream(
        self,
        call: Call,
        reply: Reply,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> tuple[grpc.StatusCode, str] | None:
        """Relay a server stream; None when the browser closed the connection first."""
        assert self._channel is not None
        streaming: grpc.aio.UnaryStreamMultiCallable[bytes, bytes]
        streaming = self._channel.unary_stream(call.path)
        stream = streaming(call.message, metadata=call.metadata, timeout=call.timeout)
        # A closed browser connection (an aborted fetch) ends the call.
        watcher = asyncio.create_task(reader.read(1))

        def hung_up(task: asyncio.Task[bytes]) -> None:
            if not task.cancelled():
                task.exception()  # a reset connection is no error here: retrieve, ignore
            stream.cancel()

        watcher.add_done_callback(hung_up)
        try:
            async for response in stream:
                assert isinstance(response, bytes)
                reply.message(response)
                await self._drain(writer)
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


class Reply:
    """One gRPC-Web response: a chunked HTTP body of frames (base64 for -text) that ends with
    the trailer frame. The connection closes after it."""

    def __init__(self, writer: asyncio.StreamWriter, text: bool) -> None:
        self.writer = writer
        self.text = text

    def start(self) -> None:
        kind = "application/grpc-web-text" if self.text else "application/grpc-web+proto"
        head = (
            "HTTP/1.1 200 OK\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in CORS_HEADERS)
            + f"Content-Type: {kind}\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\nCache-Control: no-cache\r\n\r\n"
        )
        self.writer.write(head.encode("latin-1"))

    def message(self, payload: bytes) -> None:
        self._send(frame(payload))

    def finish(self, code: grpc.StatusCode, message: str) -> None:
        self._send(trailer_frame(code, message))
        self.writer.write(b"0\r\n\r\n")

    def _send(self, data: bytes) -> None:
        if self.text:
            data = base64.b64encode(data)
        self.writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
