"""The gRPC-Web gateway against hostile clients (issue 10, defects 5 and 6).

Half-sent requests must not use up the process's file descriptors, bad bytes and absurd
values get a proper answer, oversized bodies are refused before they are read, and a flood of
one condition logs one line. The gateway runs in front of a stand-in gRPC server (``ListGames``
echoes its request, ``WatchMatch`` streams for ever) on an event loop in a thread, so the
tests speak raw HTTP/1.1 over plain blocking sockets on 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
import structlog
from structlog.testing import capture_logs

from cardarena.server.api.grpcweb import MAX_MESSAGE_BYTES, GrpcWebGateway, LogThrottle

from ..waiting import wait_until

T = TypeVar("T")
SERVICE = "cardarena.v1.MatchService"
LIST_GAMES = f"/{SERVICE}/ListGames"
WATCH_MATCH = f"/{SERVICE}/WatchMatch"
WAIT = 5.0  # the most any answer may take; far above what a working gateway needs


class Backend:
    """A stand-in gRPC server and gateways in front of it, on one event loop in a thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stream_ended = threading.Event()
        self.server: grpc.aio.Server | None = None
        self.port = self.run(self._start())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    async def _start(self) -> int:
        async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            return request

        async def watch(
            request: bytes, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[bytes]:
            try:
                while True:
                    yield b"w" * 65536
            finally:
                self.stream_ended.set()

        handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
            "ListGames": grpc.unary_unary_rpc_method_handler(echo),
            "WatchMatch": grpc.unary_stream_rpc_method_handler(watch),
        }
        self.server = grpc.aio.server(
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ]
        )
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, handlers),)
        )
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        return port

    @contextlib.contextmanager
    def gateway(self, static_dir: Path | None = None, **limits: Any) -> Iterator[int]:
        """A gateway with these limits; yields its port. A refused request is answered after
        0.05 s here, not the default second (test_gateway_admission pins the wait itself)."""
        limits.setdefault("refusal_delay", 0.05)

        async def start() -> GrpcWebGateway:
            gateway = GrpcWebGateway(f"127.0.0.1:{self.port}", static_dir, **limits)
            await gateway.start("127.0.0.1", 0)
            return gateway

        gateway = self.run(start())
        try:
            yield gateway.port
        finally:
            self.run(gateway.close())

    def close(self) -> None:
        if self.server is not None:
            self.run(self.server.stop(0))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def backend() -> Iterator[Backend]:
    running = Backend()
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="module")
def web_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web")
    (root / "index.html").write_text("<!doctype html><title>cardarena</title>\n")
    return root


@pytest.fixture(scope="module")
def gateway(backend: Backend, web_root: Path) -> Iterator[int]:
    """A gateway with the default limits."""
    with backend.gateway(web_root) as port:
        yield port


# --- raw HTTP ------------------------------------------------------------------------------


def grpc_web(
    message: bytes = b"",
    *,
    path: str = LIST_GAMES,
    headers: tuple[bytes, ...] = (),
    text: bool = False,
    frame_length: int | None = None,
) -> bytes:
    """A whole gRPC-Web request carrying ``message``."""
    body = struct.pack(">BI", 0, len(message) if frame_length is None else frame_length) + message
    if text:
        body = base64.b64encode(body)
    kind = b"application/grpc-web-text" if text else b"application/grpc-web+proto"
    return head(path, b"content-type: " + kind, *headers, b"content-length: %d" % len(body)) + body


def head(path: str | bytes, *headers: bytes, method: bytes = b"POST") -> bytes:
    target = path.encode() if isinstance(path, str) else path
    lines = [method + b" " + target + b" HTTP/1.1", b"host: 127.0.0.1", *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT)


def read_to_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset ends it too)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def exchange(port: int, request: bytes) -> bytes:
    with connect(port) as sock:
        sock.sendall(request)
        return read_to_end(sock)


def http_status(response: bytes) -> int:
    assert response.startswith(b"HTTP/1.1 "), f"no HTTP answer: {response[:200]!r}"
    return int(response.split(b" ", 2)[1])


def grpc_answer(response: bytes, *, text: bool = False) -> tuple[int, list[bytes]]:
    """``(grpc-status, messages)`` of a gRPC-Web response (HTTP 200, chunked frames)."""
    assert http_status(response) == 200, response[:300]
    rest = response.split(b"\r\n\r\n", 1)[1]
    data = b""
    while rest:
        size_line, rest = rest.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            break
        chunk, rest = rest[:size], rest[size + 2 :]
        data += base64.b64decode(chunk) if text else chunk
    messages, status = [], None
    while data:
        flags, length = struct.unpack(">BI", data[:5])
        payload, data = data[5 : 5 + length], data[5 + length :]
        if flags & 0x80:
            fields = dict(line.split(":", 1) for line in payload.decode().split("\r\n") if line)
            status = int(fields["grpc-status"])
        else:
            messages.append(payload)
    assert status is not None, f"no trailer frame in {response[:300]!r}"
    return status, messages


# --- defect 5: connection exhaustion --------------------------------------------------------


def test_connections_beyond_the_cap_are_refused_at_once_and_logged_once(
    backend: Backend,
) -> None:
    """300 half-sent requests from one address against a cap of 32: some are held until the
    header timeout (at most half the cap: the address's share once the gateway is half full,
    test_gateway_admission.py), the rest answered 503 (or closed) at once, one log line for
    all of them; afterwards a well-formed call goes through."""
    half = b"POST " + LIST_GAMES.encode() + b" HTTP/1.1\r\nhost: 127.0.0.1\r\n"
    with capture_logs() as logs, backend.gateway(max_connections=32, header_timeout=3.0) as port:
        sockets = [connect(port) for _ in range(300)]
        for sock in sockets:
            sock.sendall(half)
        with grpc.insecure_channel(f"127.0.0.1:{backend.port}") as channel:  # the main port
            echo: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(LIST_GAMES)
            assert echo(b"main", timeout=WAIT) == b"main"
        answers = []
        for sock in sockets:
            answers.append(read_to_end(sock)[:12])
            sock.close()
        assert grpc_answer(exchange_until_served(port, grpc_web(b"hello"))) == (0, [b"hello"])
    held = sum(answer == b"HTTP/1.1 408" for answer in answers)
    refused = sum(answer in (b"HTTP/1.1 503", b"") for answer in answers)
    assert 0 < held <= 16 and held + refused == 300, answers
    events = [entry["event"] for entry in logs]
    assert events.count("web_connection_limit") == 1, events
    assert len(events) <= 4, events


def exchange_until_served(port: int, request: bytes) -> bytes:
    """The first answer that is not a 503 (the cap may still be full for a moment)."""

    def served() -> bytes | None:
        with contextlib.suppress(ConnectionResetError):
            response = exchange(port, request)
            if not response.startswith(b"HTTP/1.1 503") and response:
                return response
        return None

    return wait_until(served, within=WAIT, every=0.1, what="the gateway to serve again")


def test_a_slow_request_head_is_cut_off_at_the_header_timeout(backend: Backend) -> None:
    with backend.gateway(header_timeout=0.2) as port:
        with connect(port) as idle:
            assert http_status(read_to_end(idle)) == 408
        with connect(port) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\n")
            slow.settimeout(0.05)
            answer = b""
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:  # one header line every 50 ms, for ever
                with contextlib.suppress(OSError):
                    slow.sendall(b"x-slow: 1\r\n")
                try:
                    chunk = slow.recv(4096)
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                answer += chunk
            else:
                pytest.fail("a client sending its head slowly was never cut off")
    assert http_status(answer) == 408


def test_a_stalled_body_is_cut_off_at_the_read_timeout(backend: Backend) -> None:
    request = grpc_web(b"x" * 100)
    with backend.gateway(read_timeout=0.3) as port, connect(port) as sock:
        sock.sendall(request[:-50])
        assert http_status(read_to_end(sock)) == 408


def test_a_client_that_stops_reading_a_stream_is_dropped(backend: Backend) -> None:
    backend.stream_ended.clear()
    with backend.gateway(read_timeout=0.3) as port, connect(port) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(grpc_web(b"", path=WATCH_MATCH))
        # Never read: the gateway's writes stall, and it must give up and end the stream.
        assert backend.stream_ended.wait(WAIT), "the server's stream went on for ever"


def test_repeated_accept_failures_log_one_line_and_the_gateway_recovers(tmp_path: Path) -> None:
    """With its file table full the gateway cannot accept; it backs off, logs that once, and
    serves again once descriptors are free."""
    stderr_path = tmp_path / "stderr"
    with stderr_path.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", FD_STARVED_GATEWAY],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 10)
        line = child.stdout.readline() if ready else ""
        assert line.strip().isdigit(), f"gateway did not start: {stderr_path.read_text()}"
        port = int(line)
        half = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        clients = [connect(port) for _ in range(30)]
        for sock in clients:
            sock.sendall(half)
        wait_until(lambda: "web_accept_failed" in stderr_path.read_text(), within=WAIT)
        time.sleep(1.5)  # accepts keep failing meanwhile: several retries, still one line
        for sock in clients:
            sock.close()
        request = head("/", b"connection: close", method=b"GET")
        assert http_status(exchange_until_served(port, request)) == 404
    finally:
        child.kill()
        child.wait(10)
    lines = stderr_path.read_text().splitlines()
    assert sum("web_accept_failed" in line for line in lines) == 1, lines
    assert sum("Too many open files" in line for line in lines) == 1, lines
    (recovered,) = [line for line in lines if "web_accept_recovered" in line]
    failures = re.search(r'"failures": (\d+)', recovered)
    assert failures and int(failures[1]) >= 2, recovered  # it did retry meanwhile
    assert len(lines) <= 5, lines


# A gateway whose process may open only a few more descriptors: accepts fail with EMFILE.
FD_STARVED_GATEWAY = """
import asyncio, os, resource, sys
import structlog
from cardarena.server.api.grpcweb import GrpcWebGateway

structlog.configure(
    processors=[structlog.processors.add_log_level, structlog.processors.JSONRenderer()],
    logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
)

async def main():
    gateway = GrpcWebGateway("127.0.0.1:1", None, max_connections=1000, header_timeout=30)
    port = await gateway.start("127.0.0.1", 0)
    used = len(os.listdir("/proc/self/fd"))
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (used + 6, hard))
    print(port, flush=True)
    await asyncio.Event().wait()  # serve until the test kills the process

asyncio.run(main())
"""


def test_the_log_throttle_says_how_many_lines_it_suppressed() -> None:
    now = [0.0]
    with capture_logs() as logs:
        throttle = LogThrottle(structlog.get_logger("test"), 10.0, clock=lambda: now[0])
        for step in range(100):
            now[0] = step * 0.25  # 25 s of one condition, four times a second
            throttle.log("warning", "web_accept_failed", errno="EMFILE")
    assert [entry["suppressed"] for entry in logs] == [0, 39, 39]


# --- defect 5: bad input gets a proper answer -----------------------------------------------

LONG = "/" + "a" * 5000
BAD_REQUESTS = {
    "control byte in authorization": (grpc_web(headers=(b"authorization: Bearer a\x01b",)), 400),
    "bare CR in a header": (grpc_web(headers=(b"x-user-agent: a\rb",)), 400),
    "DEL in a header": (grpc_web(headers=(b"x-user-agent: a\x7fb",)), 400),
    "%00 in a file path": (head("/index%00.html", method=b"GET"), 400),
    "%00 in a method path": (grpc_web(path=LIST_GAMES + "%00"), 400),
    "5,000-character file path": (head(LONG, method=b"GET"), 414),
    "5,000-character method path": (grpc_web(path=LONG), 414),
    "20 KiB header": (grpc_web(headers=(b"x-big: " + b"b" * 20_000,)), 431),
    "101 headers": (grpc_web(headers=tuple(b"x-h%d: 1" % i for i in range(101))), 431),
    "signed Content-Length": (grpc_web().replace(b"content-length: 5", b"content-length: +5"), 400),
}
BAD_CALLS = {
    "non-ASCII authorization": (
        grpc_web(headers=("authorization: Bearer café".encode(),)),
        grpc.StatusCode.UNAUTHENTICATED,
    ),
    "grpc-timeout 9999999H": (
        grpc_web(headers=(b"grpc-timeout: 9999999H",)),
        grpc.StatusCode.INVALID_ARGUMENT,
    ),
    "grpc-timeout of 9 digits": (
        grpc_web(headers=(b"grpc-timeout: 123456789S",)),
        grpc.StatusCode.INVALID_ARGUMENT,
    ),
    "fractional grpc-timeout": (
        grpc_web(headers=(b"grpc-timeout: 1.5S",)),
        grpc.StatusCode.INVALID_ARGUMENT,
    ),
}


@pytest.mark.parametrize("request_bytes, status", BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_malformed_http_gets_an_error_status(
    gateway: int, request_bytes: bytes, status: int
) -> None:
    assert http_status(exchange(gateway, request_bytes)) == status


@pytest.mark.parametrize("request_bytes, code", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_call_metadata_gets_a_grpc_status(
    gateway: int, request_bytes: bytes, code: grpc.StatusCode
) -> None:
    assert grpc_answer(exchange(gateway, request_bytes)) == (code.value[0], [])


# --- defect 6: oversized bodies are refused unread ------------------------------------------


def test_an_oversized_content_length_is_refused_before_the_body_is_sent(gateway: int) -> None:
    request = grpc_web(frame_length=16 << 20)
    request = request.replace(b"content-length: 5", b"content-length: %d" % ((16 << 20) + 5))
    with connect(gateway) as sock:
        sock.sendall(request[:-5])  # the head only
        answer = read_to_end(sock)
    assert grpc_answer(answer) == (grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], [])


def test_an_oversized_chunk_is_refused_before_it_is_sent(gateway: int) -> None:
    request = head(
        LIST_GAMES, b"content-type: application/grpc-web+proto", b"transfer-encoding: chunked"
    )
    with connect(gateway) as sock:
        sock.sendall(request + b"1000000\r\n")  # a 16 MiB chunk is announced, never sent
        answer = read_to_end(sock)
    assert grpc_answer(answer) == (grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], [])


def test_a_chunked_body_within_the_limit_is_read(gateway: int) -> None:
    body = grpc_web(b"chunked!").split(b"\r\n\r\n", 1)[1]
    request = head(
        LIST_GAMES, b"content-type: application/grpc-web+proto", b"transfer-encoding: chunked"
    )
    chunks = (
        b"4\r\n" + body[:4] + b"\r\n" + b"%x\r\n" % (len(body) - 4) + body[4:] + b"\r\n0\r\n\r\n"
    )
    assert grpc_answer(exchange(gateway, request + chunks)) == (0, [b"chunked!"])


def test_expect_100_continue_is_answered_before_the_body(gateway: int) -> None:
    request = grpc_web(b"continue")
    head_end = request.index(b"\r\n\r\n")
    with connect(gateway) as sock:
        sock.sendall(request[:head_end] + b"\r\nexpect: 100-continue\r\n\r\n")
        assert sock.recv(64).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(request[head_end + 4 :])
        assert grpc_answer(read_to_end(sock)) == (0, [b"continue"])


def test_the_limit_is_one_message_in_either_encoding(gateway: int) -> None:
    """A message at the limit passes as base64 too (its body is a third larger); one byte
    more is refused from the Content-Length."""
    largest = os.urandom(MAX_MESSAGE_BYTES)
    answer = exchange(gateway, grpc_web(largest, text=True))
    assert grpc_answer(answer, text=True) == (0, [largest])
    answer = exchange(gateway, grpc_web(largest + b"!"))
    assert grpc_answer(answer) == (grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], [])


def test_the_gateway_limit_is_the_servers() -> None:
    from cardarena.server import app

    assert ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES) in app.GRPC_OPTIONS
