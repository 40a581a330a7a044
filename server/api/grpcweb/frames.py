"""gRPC-Web framing: the one request message in, response frames and the trailer out.

Browsers cannot read HTTP/2 trailers, so gRPC-Web puts each message in a frame (one flag byte,
a 4-byte big-endian length, the bytes) and the status in a last frame whose flag byte is
0x80. With ``application/grpc-web-text`` every frame is base64 on the wire. Keeping the byte
layout here lets the HTTP side and the forwarding side ignore it.
"""

from __future__ import annotations

import asyncio
import base64
import struct
import urllib.parse

import grpc

from .http import CORS_HEADERS

MAX_MESSAGE_BYTES = 256 * 1024
"""The largest message the server reads, on the gRPC port (``server.app`` imports it) and
here: one limit for both."""


class Refused(Exception):
    """A gRPC-Web call the gateway answers itself, with this status, without the server."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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
