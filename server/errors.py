"""Errors that say what was wrong with a request, raised below the servicer and mapped to a
status code in one place (``service.status_for``)."""

from __future__ import annotations


class BadRequest(Exception):
    """The request itself is malformed: the only server error that is the client's
    INVALID_ARGUMENT. A ``ValueError`` from deeper down is a fault of the server (INTERNAL),
    never blamed on the client."""


class RequestReused(Exception):
    """A request id already answered, sent again for a different request (ALREADY_EXISTS)."""

    def __init__(self, request_id: str, what: str) -> None:
        super().__init__(f"request_id {request_id!r} was already used {what}")


class Forbidden(Exception):
    """The credential is known but does not allow this (PERMISSION_DENIED)."""
