"""How a seat playing on one Play call takes its actions' results: what it reads on after,
what it raises (as the unary call would have), and which sent actions it stops resending."""

from __future__ import annotations

import grpc
import pytest

from cardarena.clients.client.seatplay import judged
from cardarena.v1 import service_pb2 as spb


def result(code: grpc.StatusCode, request_id: str = "r1") -> spb.ActionResult:
    return spb.ActionResult(request_id=request_id, code=code.value[0], message=code.name)


@pytest.mark.parametrize(
    "code", [grpc.StatusCode.OK, grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION]
)
def test_a_result_the_seat_reads_on_after_is_no_longer_resent(code: grpc.StatusCode) -> None:
    sent = {7: spb.PlayAction(request_id="r1"), 9: spb.PlayAction(request_id="r2")}
    judged(result(code), sent, judge=False)
    assert list(sent) == [9]


def test_a_refused_action_is_the_servers_verdict_only_when_it_judges() -> None:
    judged(result(grpc.StatusCode.INVALID_ARGUMENT), {}, judge=True)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        judged(result(grpc.StatusCode.INVALID_ARGUMENT), {}, judge=False)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    "code",
    [grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.NOT_FOUND],
)
def test_any_other_result_is_raised_with_its_code(code: grpc.StatusCode) -> None:
    sent = {3: spb.PlayAction(request_id="r1")}
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        judged(result(code), sent, judge=True)
    assert raised.value.code() == code and sent == {}


def test_a_code_no_status_has_is_raised_as_unknown() -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        judged(spb.ActionResult(request_id="r", code=99, message="?"), {}, judge=True)
    assert raised.value.code() == grpc.StatusCode.UNKNOWN


def test_an_action_refused_with_a_code_worth_retrying_is_kept_to_send_again() -> None:
    sent = {5: spb.PlayAction(request_id="r1")}
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        judged(result(grpc.StatusCode.UNAVAILABLE), sent, judge=True)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert list(sent) == [5]  # the reopened call sends it again, with its request id
