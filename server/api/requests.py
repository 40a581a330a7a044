"""Checking what a request carries: ids, secrets, names, seats, credentials.

Each check raises ``BadRequest`` (INVALID_ARGUMENT) or a ``Refused`` with the status a
credential problem has; none of them echoes a secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from cardarena.v1 import service_pb2 as spb

from ..errors import (
    BadRequest,
    NotRunning,
)
from ..hosting import CONTRIBUTION_BYTES, HostedMatch
from .status import Refused

T = TypeVar("T")

REQUEST_ID = re.compile(r"[\x21-\x7e]{1,64}")
SECRET = re.compile(r"[\x21-\x7e]{32,128}")
"""Client-chosen seat tokens, join secrets and creator secrets."""
SECRET_RULE = "32 to 128 printable ASCII characters, no spaces"
MAX_PAGE = 1000
MAX_NAME = 64
MAX_REASON = 200


def parsed(what: str, parse: Callable[[], T]) -> T:
    """A field decoded by the codec, whose ``ValueError`` is then the client's mistake."""
    try:
        return parse()
    except ValueError as error:
        raise BadRequest(f"{what}: {error}") from None


def check_request_id(request_id: str) -> None:
    """Empty (none), or 1..64 printable ASCII characters without spaces."""
    if request_id and not REQUEST_ID.fullmatch(request_id):
        raise BadRequest("request_id is 1..64 printable ASCII characters without spaces")


def check_secret(field: str, value: str) -> None:
    if value and not SECRET.fullmatch(value):
        raise BadRequest(f"{field} is {SECRET_RULE}")


def authorization_of(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    """The raw ``authorization`` metadata, to pass on unread when forwarding."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return None


def credential(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    """The secret of ``authorization: Bearer <secret>``, if the call carries one."""
    value = authorization_of(context)
    if value is not None and value.startswith("Bearer "):
        return value[len("Bearer ") :]
    return None


def bearer_token(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    token = credential(context)
    if token is None:
        raise Refused(
            grpc.StatusCode.UNAUTHENTICATED,
            "send the seat's token as metadata 'authorization: Bearer <token>'",
        )
    return token


def authorize(hosted: HostedMatch, seat: int, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    owner = hosted.seat_of(bearer_token(context))
    if owner is None:
        raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the token is not a seat of this match")
    if owner != seat:
        raise Refused(
            grpc.StatusCode.PERMISSION_DENIED, f"the token is for seat {owner}, not seat {seat}"
        )


def check_seat(hosted: HostedMatch, seat: int) -> None:
    if not 0 <= seat < hosted.record.players:
        raise BadRequest(f"seat {seat} does not exist (0..{hosted.record.players - 1})")


def check_contribution(hosted: HostedMatch, contribution: bytes) -> None:
    """A seat's entropy: none, or exactly 32 bytes; none in a match whose seed it shares
    with other matches (a duplicate group deals every rotation the same cards)."""
    if not contribution:
        return
    if len(contribution) != CONTRIBUTION_BYTES:
        raise BadRequest(
            f"contribution is exactly {CONTRIBUTION_BYTES} bytes, got {len(contribution)}"
        )
    if hosted.seed_shared:
        raise NotRunning(
            "contribution: a tournament's match is dealt from its duplicate group's seed "
            "(contribute to the tournament's seed instead, when entering)"
        )


def check_text(field: str, value: str, limit: int) -> None:
    """Names and reasons: at most ``limit`` characters, every one printable (no control,
    format or line-separating character: nothing that hides, reorders or breaks the text
    around it where it is shown), spaces allowed."""
    if len(value) > limit:
        raise BadRequest(f"{field} is at most {limit} characters")
    if any(not (c.isprintable() or c == " ") for c in value):
        raise BadRequest(f"{field} may only contain printable characters")


def reservations(request: spb.CreateMatchRequest) -> dict[int, str]:
    reserved: dict[int, str] = {}
    for i, reservation in enumerate(request.reserved_seats):
        where = f"reserved_seats[{i}]"
        if reservation.WhichOneof("holder") != "join_secret":
            raise BadRequest(f"{where}: name who may take the seat (join_secret)")
        check_secret(f"{where}.join_secret", reservation.join_secret)
        if reservation.seat in reserved:
            raise BadRequest(f"{where}: seat {reservation.seat} is reserved twice")
        reserved[reservation.seat] = reservation.join_secret
    return reserved
