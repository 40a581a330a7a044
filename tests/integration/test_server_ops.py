"""Operating a real server: health, reflection, metrics, logs and the SIGTERM drain (paging,
error codes and many matches at once: ``test_server_requests``)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import (
    LAST,
    RPC_TIMEOUT,
    SERVICE,
    Table,
    act,
    act_times,
    auth,
    create,
    health_check,
    health_watch,
    join_all,
    new_table,
    reflection_services,
    refused,
    run,
    sample,
    scrape,
    seat_feed,
    snapshot_of,
    stub,
    watch_feed,
    with_api,
)
from ..serverproc import ServerProcess, log_records
from ..waiting import eventually

if TYPE_CHECKING:
    from pathlib import Path

    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
METRICS = (
    "cardarena_matches",
    "cardarena_actions_total",
    "cardarena_action_seconds",
    "cardarena_store_commit_seconds",
    "cardarena_store_commit_batch_size",
    "cardarena_stream_subscribers",
    "cardarena_rpc_errors_total",
)


# --------------------------------------------------------------------------- health, reflection


def test_health_serves_both_names_and_reflection_lists_the_service(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            check = health_check(channel)
            for name in ("", SERVICE):
                answer = await check(health_pb2.HealthCheckRequest(service=name), timeout=10)
                assert answer.status == SERVING, name
            unknown = check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
            assert await refused(unknown) == grpc.StatusCode.NOT_FOUND
            services = await reflection_services(channel)
            assert SERVICE in services
            assert "grpc.health.v1.Health" in services

    run(scenario())


def test_health_list_answers_every_service_as_check_does(server: ServerProcess) -> None:
    """``List``, which reflection shows as a method of the health service, answers (it was
    UNIMPLEMENTED): every service's status, the same as ``Check``'s."""
    messages: Any = health_pb2  # HealthList* are newer than the lock's type stubs

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            listing = channel.unary_unary(
                "/grpc.health.v1.Health/List",
                request_serializer=messages.HealthListRequest.SerializeToString,
                response_deserializer=messages.HealthListResponse.FromString,
            )
            answer = await listing(messages.HealthListRequest(), timeout=RPC_TIMEOUT)
            statuses = {name: s.status for name, s in answer.statuses.items()}
            assert statuses == {"": SERVING, SERVICE: SERVING}
            check = health_check(channel)
            for name, status in statuses.items():
                one = await check(health_pb2.HealthCheckRequest(service=name), timeout=10)
                assert one.status == status

    run(scenario())


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_is_served_as_v1_beside_v1alpha(server: ServerProcess, version: str) -> None:
    """Reflection answers on both names (grpcurl and grpc_cli try v1 first): it lists both,
    and describes the v1 service and the match service from either."""

    async def scenario() -> list[reflection_pb2.ServerReflectionResponse]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            info = channel.stream_stream(
                f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
            )
            call = info(timeout=RPC_TIMEOUT)
            answers = []
            for ask in (
                reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=REFLECTION_V1),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE),
            ):
                await call.write(ask)
                answer = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
                assert isinstance(answer, reflection_pb2.ServerReflectionResponse), answer
                answers.append(answer)
            await call.done_writing()
            return answers

    listing, v1_file, service_file = run(scenario())
    listed = {s.name for s in listing.list_services_response.service}
    assert {REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection", SERVICE} <= listed
    assert "grpc.health.v1.Health" in listed
    (v1,) = (f for f in files_of(v1_file) if f.package == "grpc.reflection.v1")
    assert v1.name == "grpc/reflection/v1/reflection.proto"
    assert v1.service[0].method[0].input_type == ".grpc.reflection.v1.ServerReflectionRequest"
    assert "cardarena.v1" in {f.package for f in files_of(service_file)}


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def files_of(
    answer: reflection_pb2.ServerReflectionResponse,
) -> list[descriptor_pb2.FileDescriptorProto]:
    assert answer.WhichOneof("message_response") == "file_descriptor_response", answer
    return [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in answer.file_descriptor_response.file_descriptor_proto
    ]


def test_sigterm_drains_streams_with_unavailable_then_exits_0_and_streams_resume(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"

    async def before_and_during(address: str, server: ServerProcess) -> tuple[Table, int]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            table = await new_table(api)
            last = await act_times(api, table, 5)
            seat = seat_feed(api, table.match_id, 0, table.tokens[0], after_seq=0)
            spectator = watch_feed(api, table.match_id, after_seq=0)
            for feed in (seat, spectator):
                assert (await feed.snapshot()).seq == last
                assert len(await feed.events_through(last)) == last
            watch = health_watch(channel)(health_pb2.HealthCheckRequest(service=""), timeout=20)
            first = await asyncio.wait_for(watch.read(), RPC_TIMEOUT)
            assert isinstance(first, health_pb2.HealthCheckResponse) and first.status == SERVING

            server.signal_term()
            try:
                second = await asyncio.wait_for(watch.read(), 5)
                assert isinstance(second, health_pb2.HealthCheckResponse), second
                assert second.status == NOT_SERVING
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.UNAVAILABLE, error
            watch.cancel()
            for feed in (seat, spectator):
                with pytest.raises(grpc.aio.AioRpcError) as ended:
                    item = await feed.next(5)
                    raise AssertionError(f"the stream went on during the drain: {item}")
                assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
            # nothing new is accepted while the server drains
            check = health_check(channel)(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
            try:
                answer = await asyncio.wait_for(check, 5)
                assert answer.status == NOT_SERVING
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.UNAVAILABLE
            again = watch_feed(api, table.match_id, after_seq=last)
            assert await refused(again.call) == grpc.StatusCode.UNAVAILABLE
            return table, last

    async def after(address: str, table: Table, last: int) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            check = health_check(channel)
            answer = await check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=10)
            assert answer.status == SERVING
            resumed = seat_feed(api, table.match_id, 0, table.tokens[0], after_seq=last)
            snap = await resumed.snapshot()
            assert snap.seq == last, "nothing was lost or added by the restart"
            done = await act(api, table)
            assert done is not None and done.first_seq == last + 1
            assert (await resumed.event()).seq == last + 1
            resumed.cancel()

    with ServerProcess(data) as server:
        table, last = run(before_and_during(server.address, server))
        assert server.wait_exit(10) == 0
        assert time.monotonic() - server.term_sent < 8, "the drain took too long"
    with ServerProcess(data) as again:
        run(after(again.address, table, last))


# --------------------------------------------------------------------------- metrics


def test_metrics_are_exposed_and_commits_are_observed(server: ServerProcess) -> None:
    text = scrape(server.metrics_port)
    for name in METRICS:
        assert f"# HELP {name} " in text, name
    before = scrape(server.metrics_port)

    async def scenario(api: MatchServiceAsyncStub) -> None:
        table = await new_table(api)
        await act_times(api, table, 5)
        missing = api.GetMatch(spb.GetMatchRequest(match_id="no-such-match"), timeout=10)
        assert await refused(missing) == grpc.StatusCode.NOT_FOUND
        # an open stream counts as a subscriber until it ends
        feed = watch_feed(api, table.match_id, after_seq=LAST)
        await feed.snapshot()
        opened = sample(scrape(server.metrics_port), "cardarena_stream_subscribers")
        assert opened >= sample(before, "cardarena_stream_subscribers") + 1
        feed.cancel()
        await eventually(
            lambda: sample(scrape(server.metrics_port), "cardarena_stream_subscribers") < opened,
            within=5,
            what="the subscriber gauge to go down",
        )
        # the gauge of matches agrees with ListMatches
        listed = await api.ListMatches(spb.ListMatchesRequest(page_size=1000), timeout=10)
        after = scrape(server.metrics_port)
        for state, status in (
            ("waiting", spb.MATCH_STATUS_WAITING),
            ("running", spb.MATCH_STATUS_RUNNING),
            ("ended", spb.MATCH_STATUS_ENDED),
        ):
            count = sum(1 for m in listed.matches if m.status == status)
            assert sample(after, "cardarena_matches", state=state) == count, state

    with_api(server.address, scenario)
    after = scrape(server.metrics_port)
    commits = sample(after, "cardarena_store_commit_batch_size_count") - sample(
        before, "cardarena_store_commit_batch_size_count"
    )
    writes = sample(after, "cardarena_store_commit_batch_size_sum") - sample(
        before, "cardarena_store_commit_batch_size_sum"
    )
    assert commits >= 1 and writes >= 5 + 3, (commits, writes)  # 5 actions, 3 joins at least
    assert sample(after, "cardarena_store_commit_seconds_count") > 0
    assert sample(after, "cardarena_actions_total") - sample(before, "cardarena_actions_total") == 5
    assert sample(after, "cardarena_action_seconds_count") >= 5
    errors = sample(after, "cardarena_rpc_errors_total", code="NOT_FOUND") - sample(
        before, "cardarena_rpc_errors_total", code="NOT_FOUND"
    )
    assert errors == 1


def test_a_retried_request_is_not_counted_as_another_action(server: ServerProcess) -> None:
    """Regression: a retry with an applied request_id used to count in actions_total again."""

    async def scenario(api: MatchServiceAsyncStub) -> None:
        table = await new_table(api)
        snap = await _actor_snapshot(api, table)
        request = spb.SubmitActionRequest(
            match_id=table.match_id,
            seat=snap.viewer_seat,
            action=snap.legal_actions[0],
            expected_seq=snap.seq,
            request_id="retried",
        )
        metadata = auth(table.tokens[snap.viewer_seat])
        before = sample(scrape(server.metrics_port), "cardarena_actions_total")
        first = await api.SubmitAction(request, metadata=metadata, timeout=10)
        again = await api.SubmitAction(request, metadata=metadata, timeout=10)
        assert (first.first_seq, first.last_seq) == (again.first_seq, again.last_seq)
        after = sample(scrape(server.metrics_port), "cardarena_actions_total")
        assert after - before == 1, f"one action applied, {after - before} counted"

    with_api(server.address, scenario)


async def _actor_snapshot(api: MatchServiceAsyncStub, table: Table) -> pb.Snapshot:
    """The snapshot of the seat to act, with its legal actions."""
    seat = (await snapshot_of(api, table.match_id)).to_act
    return await snapshot_of(api, table.match_id, seat, table.tokens[seat])


# --------------------------------------------------------------------------- logs


def test_logs_are_json_with_match_ids_and_never_a_token_or_a_seed(tmp_path: Path) -> None:
    seeds = [secrets.token_bytes(32) for _ in range(2)]

    async def scenario(address: str) -> list[Table]:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            tables = []
            for seed in seeds:
                info = await create(api, "triathlon", 3, seed=seed, max_deals=1)
                tokens = await join_all(api, info.match_id, 3)
                tables.append(Table(info.match_id, tokens, info.seed_commitment))
            first, second = tables
            await act_times(api, first, 7)
            await act_times(api, second, 3)
            # refusals that carry tokens: the wrong seat, another match's token, a stale seq
            wrong_seat = api.StreamEvents(
                spb.StreamEventsRequest(match_id=first.match_id, seat=1, after_seq=0),
                metadata=auth(first.tokens[0]),
                timeout=10,
            )
            assert await refused(wrong_seat) == grpc.StatusCode.PERMISSION_DENIED
            other_match = api.SubmitAction(
                spb.SubmitActionRequest(match_id=first.match_id, seat=0),
                metadata=auth(second.tokens[0]),
                timeout=10,
            )
            assert await refused(other_match) == grpc.StatusCode.UNAUTHENTICATED
            return tables

    with ServerProcess(tmp_path / "data") as server:
        tables = run(scenario(server.address))
        assert server.terminate() == 0
        text = server.stderr_path.read_text()
    records = log_records(server.stderr_path)
    assert all({"event", "level", "timestamp"} <= r.keys() for r in records)
    for table in tables:
        about = [r for r in records if table.match_id in str(r.values())]
        assert any(r["event"] == "match_created" for r in about), table.match_id
        joined = sorted(r["seat"] for r in about if r["event"] == "seat_joined")
        assert joined == [0, 1, 2]
        for record in about:
            assert record.get("match_id") == table.match_id, record
        for token in table.tokens:
            assert token not in text
            assert hashlib.sha256(b"cardarena-token-v1" + token.encode()).hexdigest() not in text
    for seed in seeds:
        for form in (
            seed.hex(),
            seed.hex().upper(),
            base64.b64encode(seed).decode(),
            base64.urlsafe_b64encode(seed).decode(),
            repr(seed),
        ):
            assert form not in text, form
