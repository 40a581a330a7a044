"""A refused body is not read to its end (issue 29, flood of 16 MiB requests).

After refusing a body over the limit, the gateway lingers discarding what the client still
sends, so that the client reads the answer rather than a reset; it used to discard for two
seconds whatever came, which for 16 MiB requests cost two thirds of a core of the server's
event loop. Now it discards at most ``LINGER_BYTES``: a client still sending gets the answer,
then a reset, long before it has sent everything.
"""

from __future__ import annotations

import struct
import threading

import grpc

from cardarena.server.api.grpcweb.connection import LINGER_BYTES

from .test_gateway import LIST_GAMES, WAIT, backend, connect, gateway, grpc_answer, head, web_root

__all__ = ["backend", "gateway", "web_root"]  # the module's fixtures, shared

HUGE = 64 << 20


def test_a_refused_body_is_discarded_only_up_to_a_bound(gateway: int) -> None:
    assert LINGER_BYTES <= 4 << 20
    request = head(
        LIST_GAMES,
        b"content-type: application/grpc-web+proto",
        b"content-length: %d" % (HUGE + 5),
    ) + struct.pack(">BI", 0, HUGE)
    sent = [0]
    chunk = bytes(64 * 1024)
    with connect(gateway) as sock:
        sock.sendall(request)

        def send_body() -> None:  # as a browser does: the body goes on while the answer comes
            try:
                while sent[0] < HUGE:
                    sent[0] += sock.send(chunk)
            except OSError:
                pass  # reset: the gateway stopped reading

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        answer = b""
        while not answer.endswith(b"\r\n0\r\n\r\n"):  # the last chunk of the answer
            data = sock.recv(65536)
            assert data, f"closed before the answer: {answer!r}"
            answer += data
        sender.join(WAIT * 2)  # a reset, or the socket's timeout once nobody reads
    assert grpc_answer(answer) == (grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], [])
    assert sent[0] < HUGE // 2, f"{sent[0]:,} bytes sent before the gateway stopped reading"
