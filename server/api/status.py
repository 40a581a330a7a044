"""The one table from errors to status codes, and how every refusal is made.

The domain's errors are raised where they are found (``server.errors``, the engine's, the
store's); here each becomes a gRPC status with a message a person can act on, and anything
unexpected becomes INTERNAL with an error id whose details only the server's log has.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, NoReturn, TypeVar

import grpc
import structlog

from cardarena.engine import (
    ActionError,
    IllegalAction,
    MalformedAction,
    NotYourTurn,
    OptionError,
)

from .. import metrics
from ..errors import (
    BadRequest,
    DirectedElsewhere,
    Forbidden,
    HeldBack,
    HouseBotsOff,
    HouseFull,
    Moved,
    NotRunning,
    RequestReused,
    SeatTaken,
    Stale,
    Throttled,
    UnknownTournament,
    Unreplayable,
)
from ..store import InvalidPageToken, LeaseLost, StoreConflict, StoreError, UnknownMatch
from .peers import OwnerUnreachable

log = structlog.get_logger(__name__)

STORE_DOWN = "the event store is unavailable: retry shortly, with the same request id"
FELL_BEHIND = "the stream fell behind or the server is draining: resume from your last seq"
RETRY_AFTER = "cardarena-retry-after-ms"


MESSAGE_MAX = 1000
"""Characters of a refusal's message at most: a message may quote what the client sent (an
unknown id, say), and the client decides how long that is. Past the gRPC metadata limit
(16 KiB) a long echo would even turn the status into RESOURCE_EXHAUSTED."""


class Refused(Exception):
    """A request refused with a specific status code (and trailing metadata, if any); its
    message is cut to :data:`MESSAGE_MAX` characters."""

    def __init__(
        self, code: grpc.StatusCode, message: str, trailers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        if len(message) > MESSAGE_MAX:
            message = message[: MESSAGE_MAX - 1] + "…"
        super().__init__(message)
        self.code = code
        self.trailers = trailers


_ROWS: tuple[tuple[tuple[type[BaseException], ...], grpc.StatusCode], ...] = (
    ((Moved, LeaseLost, OwnerUnreachable, DirectedElsewhere), grpc.StatusCode.UNAVAILABLE),
    (
        (BadRequest, MalformedAction, OptionError, InvalidPageToken),
        grpc.StatusCode.INVALID_ARGUMENT,
    ),
    (
        (NotYourTurn, IllegalAction, NotRunning, HeldBack, HouseBotsOff, ActionError),
        grpc.StatusCode.FAILED_PRECONDITION,
    ),
    ((Stale, StoreConflict), grpc.StatusCode.ABORTED),
    ((UnknownMatch, UnknownTournament), grpc.StatusCode.NOT_FOUND),
    ((StoreError,), grpc.StatusCode.UNAVAILABLE),  # the database is away (a write may stand)
    ((SeatTaken, RequestReused), grpc.StatusCode.ALREADY_EXISTS),
    ((Forbidden,), grpc.StatusCode.PERMISSION_DENIED),
    ((Throttled, HouseFull), grpc.StatusCode.RESOURCE_EXHAUSTED),
    ((Unreplayable,), grpc.StatusCode.DATA_LOSS),
)
CODES: dict[type[BaseException], grpc.StatusCode] = {
    kind: code for kinds, code in _ROWS for kind in kinds
}
"""The one table from errors to status codes. The most specific type wins: an error takes the
code of the first of its classes, in method resolution order, that has one (LeaseLost,
UnknownMatch and InvalidPageToken are StoreErrors with codes of their own), so the order of
the rows does not matter. Anything not in it is a fault of the server: INTERNAL."""


def status_for(error: BaseException) -> grpc.StatusCode | None:
    if isinstance(error, Refused):
        return error.code
    if isinstance(error, grpc.aio.AioRpcError):  # the owner's answer to a forwarded call
        return error.code()
    for kind in type(error).__mro__:
        code = CODES.get(kind)
        if code is not None:
            return code
    return None


def refusal_of(error: Exception) -> Refused:
    """A known error as its status and message; anything else as INTERNAL with an error id
    (the details go to the log, never to the client)."""
    if isinstance(error, Refused):
        return error
    code = status_for(error)
    if code is None:
        error_id = secrets.token_hex(6)
        log.error(
            "unexpected_error",
            error_id=error_id,
            error_type=type(error).__name__,
            exc_info=error,
        )
        return Refused(
            grpc.StatusCode.INTERNAL, f"internal error {error_id}: the server's log has the details"
        )
    if isinstance(error, grpc.aio.AioRpcError):
        return Refused(code, error.details() or code.name)
    if isinstance(error, StoreError) and code == grpc.StatusCode.UNAVAILABLE:
        # Where the database is and what it said is for the operator's log, not a client.
        log.warning("store_unavailable", error=str(error))
        return Refused(code, STORE_DOWN)
    if isinstance(error, Throttled):
        return Refused(code, str(error), ((RETRY_AFTER, str(error.retry_after_ms)),))
    return Refused(code, str(error))


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """Whatever goes wrong inside becomes a ``Refused`` (see :func:`refusal_of`)."""
    try:
        yield
    except Exception as error:
        refused = refusal_of(error)
        if refused is error:
            raise
        raise refused from error


Context = grpc.aio.ServicerContext[Any, Any]
"""A call's server-side context, as every handler receives it."""


async def abort(context: Context, refused: Refused) -> NoReturn:
    """End the call with ``refused``'s status (counted, with its trailers), from anywhere:
    ``context.abort`` raises, and whatever the handler is doing ends with it."""
    _counted(context, refused)
    await context.abort(refused.code, str(refused))
    raise AssertionError("abort returns only by raising")


def finish(context: Context, refused: Refused) -> None:
    """Give a streaming handler that is about to return ``refused``'s status (counted, with
    its trailers): gRPC sends it when the handler's generator ends.

    Why not :func:`abort`: gRPC keeps the exception ``context.abort`` raises on the call, and
    its traceback holds the frames that hold the call, a cycle that only the garbage
    collector frees. A stream's objects have lived long enough to be in the collector's
    oldest generation, which it rarely walks (``app.tune_collector``), so every aborted
    stream's call stayed in memory until then: a crowd of spectators refused after a pause
    grew the server by about 100 MiB a minute."""
    _counted(context, refused)
    context.set_code(refused.code)
    context.set_details(str(refused))


def _counted(context: Context, refused: Refused) -> None:
    """Count a refusal by its code and put its trailers on the call."""
    metrics.ERRORS.labels(refused.code.name).inc()
    if refused.trailers:
        context.set_trailing_metadata(refused.trailers)


S = TypeVar("S")
Q = TypeVar("Q")
R = TypeVar("R")


def unary(
    handler: Callable[[S, Q, Context], Awaitable[R]],
) -> Callable[[S, Q, Context], Awaitable[R]]:
    """A unary handler whose every error ends the call with its status, the one way."""

    @functools.wraps(handler)
    async def call(service: S, request: Q, context: Context) -> R:
        try:
            with refusals():
                return await handler(service, request, context)
        except Refused as refused:
            await abort(context, refused)

    return call


def streaming(
    handler: Callable[[S, Q, Context], AsyncIterator[R]],
) -> Callable[[S, Q, Context], AsyncIterator[R]]:
    """The same for a handler that streams its answer: an async generator, or a function that
    returns one (called as the stream starts, its errors handled the same way)."""

    @functools.wraps(handler)
    async def call(service: S, request: Q, context: Context) -> AsyncIterator[R]:
        try:
            with refusals():
                async for item in handler(service, request, context):
                    yield item
                    del item  # a stream waits long between messages: hold none of them
        except Refused as refused:
            finish(context, refused)

    return call
