"""The one table from errors to gRPC status codes, for the errors replicas and remote stores
brought: each has its code, and none tells a client where the database is."""

from __future__ import annotations

import grpc
import pytest

from cardarena.server.hosting import Moved
from cardarena.server.service import STORE_DOWN, Refused, refusals
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


def test_a_bug_is_not_dressed_up_as_a_refusal() -> None:
    with pytest.raises(ZeroDivisionError), refusals():
        raise ZeroDivisionError
