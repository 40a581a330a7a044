"""Reading and checking one HTTP/1.1 request, within limits, from bytes a stranger sends.

Nothing here waits on a clock or writes an answer: these functions read a request head and
body from a stream and raise :class:`BadRequest` (answered with its HTTP status) or
:class:`TooLarge` (refused before the body is read) for anything the gateway will not serve.
They are strict where leniency would let the gateway and the gRPC server read one request
two ways: a control byte, a repeated Content-Length, both Content-Length and chunking.
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse

MAX_REQUEST_LINE = 4096
MAX_HEAD_BYTES = 16 * 1024
MAX_HEADER_LINES = 100
# Every answer carries these, so that a browser page on another origin may read it.
CORS_HEADERS = (
    ("Access-Control-Allow-Origin", "*"),
    ("Access-Control-Expose-Headers", "grpc-status, grpc-message"),
)
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
VISIBLE = re.compile(rb"[\x21-\x7e]+")
# RFC 9110 field values: visible ASCII, space, tab and obs-text; never a control byte.
FIELD_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
DIGITS = re.compile(r"[0-9]{1,18}")
CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")
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
