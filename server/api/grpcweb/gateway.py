"""The gateway's listening side: accept, admit fairly, route each request.

Whatever a flood of clients does, the process must keep its file descriptors and its event
loop, and a newcomer must still get in: at most ``max_connections`` are served at once; at the
cap an idle connection (one waiting for a request head) of the address holding the most is
shed to make room, if that address holds more than the newcomer's would; else, or when the
newcomer's own address already holds its share, the newcomer gets a 503 and is closed unread
(:mod:`.admission`), a second later, so that its retries come at the pace the 503's
``Retry-After`` asks for (:mod:`.refusals`). A failing accept (EMFILE) backs off instead of spinning. Each request is a CORS preflight, a gRPC-Web call
(:mod:`.proxy`) or a file of the static web app.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import mimetypes
import socket
import urllib.parse
from pathlib import Path

import grpc
import structlog

from ..limits import FORWARDED_FOR, TrustedProxies, ip_address
from .admission import Admission, Slot
from .assets import IMMUTABLE, REVALIDATE, AssetCache, matches_etag, split_version
from .connection import Connection
from .frames import MAX_MESSAGE_BYTES
from .http import MAX_HEAD_BYTES, BadRequest, Request, TooLarge
from .proxy import forward
from .refusals import MAX_HELD, REFUSAL_DELAY, RefusalHold, hold_capacity
from .throttle import LogThrottle
from .webapp import missing

MAX_CONNECTIONS = 256
HEADER_TIMEOUT = 10.0
IDLE_TIMEOUT = 5.0
"""How long a kept-alive connection may wait for its next request (a browser opens a new one
when it needs one; Apache's default KeepAliveTimeout, too)."""
READ_TIMEOUT = 30.0
LOG_INTERVAL = 10.0
ACCEPT_BACKOFF = (0.05, 1.0)
LISTEN_BACKLOG = 1024
"""Connections the kernel queues for the accept loop (capped by ``net.core.somaxconn``). Held
refusals come back in bursts (a second's worth answered in one wake-up); a connection that
finds the queue full has its SYN dropped and waits for the client's retransmission, a second
or more, so the queue must hold a burst: a browser probe waited that second behind a
128-connection queue under the idle flood."""
PREFLIGHT_HEADERS = (
    ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
    (
        "Access-Control-Allow-Headers",
        "content-type, authorization, x-grpc-web, x-user-agent, grpc-timeout",
    ),
    ("Access-Control-Max-Age", "600"),
)
STATIC_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".html": "text/html; charset=utf-8",
}


def listen(host: str, port: int) -> socket.socket:
    """A non-blocking listening socket on the first address ``host`` resolves to."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
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
        idle_timeout: float = IDLE_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        log_interval: float = LOG_INTERVAL,
        refusal_delay: float = REFUSAL_DELAY,
        max_held: int = MAX_HELD,
        client_secret: str | None = None,
        proxies: TrustedProxies | None = None,
    ) -> None:
        self.target = target
        self.client_secret = client_secret
        """Vouches, on every call forwarded, for the browser's address (``limits.WEB_CLIENT``):
        the server's per-address limits then count each browser, not the gateway."""
        self.proxies = proxies or TrustedProxies()
        """The proxies in front of the gateway whose ``X-Forwarded-For`` names the browser."""
        self.static_dir = static_dir.resolve() if static_dir is not None else None
        # Why the app cannot be served (said at start-up and in every 404); None: it can.
        self.app_missing = "no web app configured" if static_dir is None else missing(static_dir)
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.idle_timeout = min(idle_timeout, header_timeout)
        self.read_timeout = read_timeout
        self.max_message_bytes = max_message_bytes
        self.port = 0
        self._log = LogThrottle(structlog.get_logger(__name__), log_interval)
        self._channel: grpc.aio.Channel | None = None
        self._socket: socket.socket | None = None
        self._acceptor: asyncio.Task[None] | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.admission = Admission(max_connections, self.proxies)
        """Who holds the connections, which of them are idle, and who is refused."""
        self.refusals = RefusalHold(refusal_delay, hold_capacity(max_connections, max_held))
        """Refused connections waiting for their 503 (:mod:`.refusals`)."""
        self._assets = AssetCache()

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` and serve; the bound port."""
        await self.serve(listen(host, port))
        return self.port

    async def serve(self, sock: socket.socket) -> None:
        """Serve on ``sock``, a non-blocking listening socket (closed by :meth:`close`)."""
        self._channel = grpc.aio.insecure_channel(self.target)
        self._socket = sock
        self.port = sock.getsockname()[1]
        self._acceptor = asyncio.create_task(self._accept_loop(sock))

    async def close(self) -> None:
        if self._acceptor is not None:
            self._acceptor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._acceptor
        if self._socket is not None:
            self._socket.close()
        self.refusals.close()
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
        """Serve ``conn`` (having shed an idle connection if the cap was reached), or answer
        503 and close it without reading, after a moment (:mod:`.refusals`): every connection
        is busy, or its address holds its share (:mod:`.admission`)."""
        try:
            host = str(conn.getpeername()[0])
        except OSError:  # gone already
            conn.close()
            return
        shed = self.admission.shed_count
        slot = self.admission.admit(host)
        if self.admission.shed_count != shed:
            self._log.log("info", "web_connection_shed", shed=self.admission.shed_count)
        if isinstance(slot, str):
            self._log.log(
                "warning",
                "web_connection_limit",
                limit=self.max_connections,
                share=self.admission.share,
                reason=slot,
                held=len(self.refusals),
            )
            self.refusals.refuse(conn)
            return
        task = asyncio.create_task(self._open(conn, slot))
        slot.shed = task.cancel
        self._connections.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self._connections.discard(task)
            self.admission.release(slot)

        task.add_done_callback(done)

    async def _open(self, conn: socket.socket, slot: Slot) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=conn, limit=MAX_HEAD_BYTES)
        except OSError:
            conn.close()
            return
        except asyncio.CancelledError:
            conn.close()
            raise

        def waiting(idle: bool) -> None:
            if idle:
                self.admission.idle(slot)
            else:
                self.admission.busy(slot)

        await self._serve_connection(
            Connection(
                reader,
                writer,
                header_timeout=self.header_timeout,
                idle_timeout=self.idle_timeout,
                read_timeout=self.read_timeout,
                max_message_bytes=self.max_message_bytes,
                log=self._log,
                waiting=waiting,
                refusal_delay=self.refusals.delay,
            )
        )

    async def _serve_connection(self, conn: Connection) -> None:
        first = True
        try:
            while await self._serve_one(conn, first):
                first = False
        except (OSError, asyncio.IncompleteReadError):
            pass  # the client went away, or stopped reading (TimeoutError is an OSError)
        except Exception:
            self._log.log("error", "web_connection_failed", exc_info=True)
        finally:
            await conn.close()

    async def _serve_one(self, conn: Connection, first: bool) -> bool:
        """Read and answer one request; False when the connection must close."""
        try:
            request = await conn.receive(first)
        except BadRequest as error:
            await conn.refuse(error.status, str(error))
            return False
        except TooLarge as error:
            await conn.refuse_large(error.request)
            return False
        if request is None:
            return False
        keep = await self._handle(request, conn)
        return keep and request.headers.get("connection", "").lower() != "close"

    def _vouched(self, request: Request, conn: Connection) -> str | None:
        """What vouches for the browser behind ``request``: the secret, a space, its address
        (behind a trusted proxy, the one the proxy names); ``None`` without a secret."""
        if self.client_secret is None:
            return None
        browser = conn.peer_host
        peer = ip_address(browser)
        if peer is not None:
            browser = str(self.proxies.client(peer, request.headers.get(FORWARDED_FOR)))
        return f"{self.client_secret} {browser}"

    async def _handle(self, request: Request, conn: Connection) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        if request.method == "OPTIONS":
            await conn.respond(204, "", b"", extra=PREFLIGHT_HEADERS)
            return True
        if request.grpc_web:
            assert self._channel is not None
            await forward(self._channel, request, conn, self._vouched(request, conn))
            return False
        if request.method in ("GET", "HEAD"):
            await self._static(request, conn)
            return True
        await conn.respond(405, "text/plain", b"method not allowed\n")
        return True

    def _static_file(self, path: str) -> Path | None:
        """The file under the web root that ``path`` names, if there is one.

        The path is checked by its words, not by resolving links: no ``.`` or ``..``
        segment may climb out of the root. Links inside the root are the installer's (an
        editable install links each file back to the checkout) and are followed."""
        assert self.static_dir is not None
        parts = [part for part in urllib.parse.unquote(path).split("/") if part]
        if any(part in (".", "..") or "\\" in part for part in parts):
            return None
        try:
            candidate = self.static_dir.joinpath(*parts)
            if candidate.is_dir():
                candidate = candidate / "index.html"
            if candidate.is_file():
                return candidate
        except (OSError, ValueError):  # a name too long for the file system, say
            pass
        return None

    async def _static(self, request: Request, conn: Connection) -> None:
        if self.static_dir is None:
            await conn.respond(404, "text/plain", b"no web app configured\n")
            return
        candidate = self._static_file(request.path)
        version = None
        if candidate is None:
            # dist/app.<hash>.js, as the page names dist/app.js (see assets.py)
            parts = [p for p in request.path.split("/") if p]
            hashed = split_version(Path(*parts)) if parts else None
            if hashed is not None:
                candidate = self._static_file("/".join(hashed[0].parts))
                version = hashed[1]
        if candidate is None:
            # The reason names server paths: it goes to the log, not to a stranger.
            why = b"; the web app is not installed on this server (see its log)"
            await conn.respond(
                404, "text/plain", b"not found" + (why if self.app_missing else b"") + b"\n"
            )
            return
        kind = STATIC_TYPES.get(candidate.suffix) or mimetypes.guess_type(candidate.name)[0]
        assert self.static_dir is not None
        if candidate.suffix == ".html":
            asset = self._assets.page(candidate, self.static_dir)
        else:
            asset = self._assets.get(candidate)
        # A hashed name is the file's for ever; a stale one (an old page) gets today's bytes
        # without being kept.
        immutable = version is not None and version == asset.version
        body, encoding = asset.variant(request.headers.get("accept-encoding", ""))
        etag = asset.tag(encoding)
        extra = [("Cache-Control", IMMUTABLE if immutable else REVALIDATE), ("ETag", etag)]
        if asset.compressible:
            extra.append(("Vary", "Accept-Encoding"))
        if matches_etag(request.headers.get("if-none-match", ""), etag):
            await conn.respond(304, "", b"", extra=tuple(extra), length=False)
            return
        if encoding is not None:
            extra.append(("Content-Encoding", encoding))
        await conn.respond(
            200,
            kind or "application/octet-stream",
            b"" if request.method == "HEAD" else body,
            extra=tuple(extra),
            length=len(body),
        )
