"""One client's HTTP/1.1 connection: each read and write bounded by a clock, and the answers
the gateway gives when it will not serve a request.

A stranger may send slowly, never finish, or stop reading what it is sent; each of these
would hold a connection (and a file descriptor) for ever. So the first request head must
arrive within ``header_timeout``, each later one on a kept-alive connection within
``idle_timeout`` (no longer than the header timeout: an idle connection is worth the least),
the body and every write within ``read_timeout``. While it waits for a head the connection
tells the gateway it is idle (``waiting(True)``), and may be shed to make room for a newcomer
(:mod:`.admission`); from the moment its head is read it is busy (``waiting(False)``). After
an answer sent before the request was read to its end, the connection lingers discarding
input, so that closing does not reset it before the client reads the answer.

A refused request (malformed, too large, too slow) is answered after ``refusal_delay`` (give
or take a jitter), the second a connection refused admission waits for its 503 (:mod:`.refusals`), with
nothing read meanwhile (the kernel's buffers fill and the client's sending stops). Why: a
client told at once comes back at once. Measured by ``scripts/bench_flood.py``'s ``bodies``
flood, 8 callers sending 16 MiB requests had about 700 a second refused, each after a
mebibyte discarded: more than half a core of the gateway on a two-CPU machine. Held, they
come back 8 times a second.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import grpc

from .frames import Reply, too_large
from .http import (
    CORS_HEADERS,
    BadRequest,
    Request,
    TooLarge,
    body_limit,
    content_length,
    read_chunked,
    read_head,
)
from .refusals import jittered
from .throttle import LogThrottle

REASONS = {
    200: "OK",
    204: "No Content",
    304: "Not Modified",
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
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
# After an answer sent before the request was read to its end: how long to discard what the
# client still sends, so that closing does not reset the connection before it reads the answer.
LINGER_SECONDS = 2.0
LINGER_BYTES = 1 << 20
"""And how much of it at most: four times the largest body a browser of this protocol sends.
Reading a refused 16 MiB body to its end cost the event loop ~25 ms a request (flood of
16 MiB requests: two thirds of a core); a client sending more than this gets a reset."""


class Connection:
    """The reader and writer of one accepted connection, with the gateway's limits."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        header_timeout: float,
        read_timeout: float,
        max_message_bytes: int,
        log: LogThrottle,
        idle_timeout: float | None = None,
        waiting: Callable[[bool], None] = lambda idle: None,
        refusal_delay: float = 0.0,
    ) -> None:
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.peer_host = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        """The client's address, which the gateway vouches for on each call it forwards."""
        self.header_timeout = header_timeout
        self.idle_timeout = header_timeout if idle_timeout is None else idle_timeout
        """How long a kept-alive connection may wait for its next request head."""
        self.waiting = waiting
        """Told True while the connection waits for a request head, False once one is read."""
        self.read_timeout = read_timeout
        self.max_message_bytes = max_message_bytes
        self.refusal_delay = refusal_delay
        """How long a refused request waits for its answer, unread."""
        self._log = log

    async def receive(self, first: bool) -> Request | None:
        """The next request with its body, each within its timeout; None when the client
        closed, or let a kept-alive connection idle past the idle timeout."""
        self.waiting(True)
        timeout = self.header_timeout if first else min(self.idle_timeout, self.header_timeout)
        try:
            async with asyncio.timeout(timeout):
                request = await read_head(self.reader)
        except TimeoutError:
            if not first:
                return None
            raise BadRequest("request head not received in time", 408) from None
        if request is None:
            return None
        self.waiting(False)
        try:
            async with asyncio.timeout(self.read_timeout):
                request.body = await self._read_body(request)
        except TimeoutError:
            raise BadRequest("request body not received in time", 408) from None
        return request

    async def _read_body(self, request: Request) -> bytes:
        """The body, refused from its declared length before any of it is read."""
        limit = body_limit(request, self.max_message_bytes)
        length = content_length(request.headers)
        if length is not None and length > limit:
            raise TooLarge(request)
        if length != 0 and request.headers.get("expect", "").lower() == "100-continue":
            self.writer.write(CONTINUE)
            await self.drain()
        if length is None:
            return await read_chunked(self.reader, request, limit)
        return await self.reader.readexactly(length) if length else b""

    async def refuse(self, status: int, reason: str) -> None:
        self._log.log("info", "web_request_refused", status=status, reason=reason)
        await asyncio.sleep(jittered(self.refusal_delay))
        await self.respond(status, "text/plain", f"{reason}\n".encode(), close=True)
        await self.linger()

    async def refuse_large(self, request: Request) -> None:
        """A body over the limit: RESOURCE_EXHAUSTED for a gRPC-Web call, 413 otherwise."""
        if not request.grpc_web:
            await self.refuse(413, "request body too large")
            return
        self._log.log("info", "web_request_refused", status=413, reason="message too large")
        await asyncio.sleep(jittered(self.refusal_delay))
        reply = Reply(self.writer, request.text)
        reply.start()
        reply.finish(grpc.StatusCode.RESOURCE_EXHAUSTED, too_large(self.max_message_bytes))
        await self.drain()
        await self.linger()

    async def linger(self) -> None:
        """Half-close, then discard (never buffer) what the client still sends for a moment,
        up to ``LINGER_BYTES``, so that it reads the answer instead of a connection reset."""
        discarded = 0
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):
            if self.writer.can_write_eof():
                self.writer.write_eof()
            async with asyncio.timeout(LINGER_SECONDS):
                while discarded < LINGER_BYTES and (chunk := await self.reader.read(64 * 1024)):
                    discarded += len(chunk)

    async def drain(self) -> None:
        """Wait for the client to take what was written, at most ``read_timeout``: a client
        that stops reading must not hold its connection for ever."""
        async with asyncio.timeout(self.read_timeout):
            await self.writer.drain()

    async def respond(
        self,
        status: int,
        content_type: str,
        body: bytes,
        *,
        extra: tuple[tuple[str, str], ...] = (),
        close: bool = False,
        length: int | bool = True,
    ) -> None:
        """Answer with ``body``. ``length``: the Content-Length to state (an int: a HEAD
        answer's, whose body is not sent), True for ``len(body)``, False for none (a 304)."""
        head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}"]
        headers = [*CORS_HEADERS, *extra]
        if length is not False:
            stated = len(body) if length is True else length
            headers.append(("Content-Length", str(stated)))
        if content_type:
            headers.append(("Content-Type", content_type))
        if close:
            headers.append(("Connection", "close"))
        head += [f"{name}: {value}" for name, value in headers]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await self.drain()

    async def close(self) -> None:
        """Close, and drop what a client that does not read still has queued."""
        self.writer.close()
        try:
            async with asyncio.timeout(LINGER_SECONDS):
                await self.writer.wait_closed()
        except OSError:
            self.writer.transport.abort()
