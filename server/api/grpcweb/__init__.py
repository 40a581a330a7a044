"""A small gRPC-Web gateway: HTTP/1.1 from browsers in, the local gRPC server out.

Browsers cannot speak gRPC's HTTP/2 trailers, so gRPC-Web carries each message in a frame
(one flag byte, a 4-byte big-endian length, the bytes) and the status in a last frame whose
flag byte is 0x80 (``grpc-status:0\\r\\ngrpc-message:\\r\\n``). With
``application/grpc-web-text`` the body is base64 both ways. Only unary and server-streaming
calls exist in gRPC-Web; ``Play`` (bidirectional) answers UNIMPLEMENTED. Three services
pass: ``MatchService``, ``TournamentService`` and ``LadderService`` (the app's tournament
and ladder pages).

The gateway forwards raw bytes through a ``grpc.aio`` channel with generic method handlers
(no decoding: the server checks every message), passes ``authorization`` through, answers
CORS preflights and serves the static web app from a directory.

``cardarena serve --web`` runs it in a process of its own (:mod:`.process`): what browsers
and floods of connections cost is not the players' event loop.

It faces strangers, so it bounds what any client can hold, as a mature HTTP server does: at
most ``max_connections`` at once (keeping the process well below its file descriptor limit),
admitted fairly: at the cap an idle connection (waiting for a request head) of the address
holding the most makes room for a newcomer whose address holds fewer; otherwise, or when the
newcomer's address holds its share (``max(4, cap // 8)`` once the gateway is half full), a
connection gets a 503 and is closed unread, held a second first (as many as its file
descriptors allow) so that a refused client's retries come at the 503's ``Retry-After``. The first request head must arrive within
``header_timeout``, a kept-alive connection's next one within ``idle_timeout``, the body and
every write within ``read_timeout``, a request line of
``MAX_REQUEST_LINE`` bytes (414) and a head of ``MAX_HEAD_BYTES`` or ``MAX_HEADER_LINES`` lines
(431). A body may hold one message of at most ``MAX_MESSAGE_BYTES``: a larger Content-Length or
chunk size is refused with RESOURCE_EXHAUSTED before any of it is read (what the client sends
on is discarded up to ``LINGER_BYTES``, then the connection is reset). A refused request, like a
refused connection, is answered after that second, unread. Conditions a flood
repeats (the cap, failing accepts, refused requests) log one line per ``log_interval``.

One concern a module, each importing only those before it::

    throttle    LogThrottle: one log line per condition and interval
    admission   fair admission: who holds the connections, which are idle, who is shed
    refusals    refused connections held a moment before their 503
    http        reading and checking a request head and body, within limits
    frames      gRPC-Web framing, base64 text mode, the Reply written to a browser
    connection  one connection: timeouts on every read and write, the error answers
    proxy       forwarding one call to the gRPC server and relaying its answer
    webapp      where the browser app is installed, and whether it can be served
    gateway     the accept loop, admitting and shedding, routing and static files
    process     the gateway in a process of its own, below the server's CPU priority
"""

from __future__ import annotations

from .frames import MAX_MESSAGE_BYTES
from .gateway import GrpcWebGateway
from .throttle import LogThrottle
from .webapp import WEB_ROOT

__all__ = ["MAX_MESSAGE_BYTES", "WEB_ROOT", "GrpcWebGateway", "LogThrottle"]
