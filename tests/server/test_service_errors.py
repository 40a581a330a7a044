"""The one table from errors to gRPC status codes, for the errors replicas and remote stores
brought: each has its code, and none tells a client where the database is."""

from __future__ import annotations

import re

import grpc
import pytest

from cardarena.server.api.status import STORE_DOWN, Refused, refusals
from cardarena.server.errors import BadRequest, Moved
from cardarena.server.store import LeaseLost, StoreClosed, StoreConflict, StoreError, UnknownMatch

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
