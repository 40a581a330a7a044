"""The one table from errors to gRPC status codes, for the errors replicas and remote stores
brought: each has its code, and none tells a client where the database is."""

from __future__ import annotations

import re

import grpc
import pytest

from cardarena.engine import MalformedAction
from cardarena.server.api.status import CODES, STORE_DOWN, Refused, refusals, status_for
from cardarena.server.errors import BadRequest, Moved
from cardarena.server.store import LeaseLost, StoreClosed, StoreConflict, StoreError, UnknownMatch
from cardarena.server.store.errors import InvalidPageToken

WHERE = "postgresql postgresql://arena:***@db.internal:5432/prod schema public"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StoreError(f"{WHERE}: OperationalError: server closed the connection"), "UNAVAILABLE"),
        (StoreClosed("store is not open"), "UNAVAILABLE"),
        (LeaseLost("m1"), "UNAVAILABLE"),
        (Moved("m1"), "UNAVAILABLE"),
        (StoreConflict("match 'm1' is at seq 4, not the expected 3"), "ABORTED"),
        (UnknownMatch("m1"), "NOT_FOUND"),
    ],
)
def test_store_and_replica_errors_have_their_codes(error: Exception, code: str) -> None:
    with pytest.raises(Refused) as refused, refusals():
        raise error
    assert refused.value.code == getattr(grpc.StatusCode, code)
    assert "db.internal" not in str(refused.value) and "arena" not in str(refused.value)
    if type(error) in (StoreError, StoreClosed):
        assert str(refused.value) == STORE_DOWN


@pytest.mark.parametrize(
    "bug", [ZeroDivisionError("division by zero"), ValueError("seat token abc123 is odd")]
)
def test_a_bug_is_internal_with_an_error_id_and_nothing_else(bug: Exception) -> None:
    """A fault of the server (a ValueError from deep inside included) is never blamed on the
    client as INVALID_ARGUMENT, and its text stays in the log."""
    with pytest.raises(Refused) as refused, refusals():
        raise bug
    assert refused.value.code == grpc.StatusCode.INTERNAL
    assert str(bug) not in str(refused.value) and type(bug).__name__ not in str(refused.value)
    assert re.fullmatch(
        r"internal error [0-9a-f]{12}: the server's log has the details", str(refused.value)
    )


def test_only_the_validators_error_is_invalid_argument() -> None:
    with pytest.raises(Refused) as refused, refusals():
        raise BadRequest("page_size is at most 1000, got 5000")
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert str(refused.value) == "page_size is at most 1000, got 5000"


def test_the_most_specific_type_wins_whatever_the_order_of_the_rows() -> None:
    """A subclass with a row of its own takes its own code, not its base's, and one without
    takes its nearest base's: the table is looked up by the error's classes in method
    resolution order, so reordering its rows changes nothing."""

    class Unlisted(StoreConflict):
        """A StoreConflict with no row: takes ABORTED from its base."""

    assert status_for(LeaseLost("m1")) == grpc.StatusCode.UNAVAILABLE  # a StoreConflict
    assert status_for(InvalidPageToken("x")) == grpc.StatusCode.INVALID_ARGUMENT  # a StoreError
    assert status_for(MalformedAction("x")) == grpc.StatusCode.INVALID_ARGUMENT  # an ActionError
    assert status_for(Unlisted("x")) == grpc.StatusCode.ABORTED
    assert status_for(KeyError("x")) is None
    for kind, code in CODES.items():
        assert status_for(kind.__new__(kind)) == code, kind
