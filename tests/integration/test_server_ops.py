"""Operating a real server: health, reflection, metrics, logs, the SIGTERM drain, paging,
error codes and many matches at once."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import (
    LAST,
    RPC_TIMEOUT,
    SERVICE,
    Table,
    act,
    act_times,
    audit,
    auth,
    create,
    health_check,
    health_watch,
    join_all,
    new_table,
    play_out,
    reflection_services,
    run,
    sample,
    scrape,
    seat_feed,
    seat_player,
    snapshot_of,
    stub,
    watch_feed,
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


async def refused(call: grpc.aio.UnaryStreamCall[Any, Any] | Awaitable[Any]) -> grpc.StatusCode:
    """The status code of a unary call, or of a stream before its second message, that fails."""
    try:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            await asyncio.wait_for(call.read(), RPC_TIMEOUT)
            await asyncio.wait_for(call.read(), RPC_TIMEOUT)
        else:
            await asyncio.wait_for(call, RPC_TIMEOUT)
    except grpc.aio.AioRpcError as error:
        return error.code()
    raise AssertionError("the call succeeded")


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

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            api = stub(channel)
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
                lambda: (
                    sample(scrape(server.metrics_port), "cardarena_stream_subscribers") < opened
                ),
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

    run(scenario())
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

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            api = stub(channel)
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

    run(scenario())


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


# --------------------------------------------------------------------------- paging


@dataclass
class Catalog:
    server: ServerProcess
    by_status: dict[spb.MatchStatus.ValueType, set[str]]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    """A server of its own with 12 matches: 4 waiting, 4 running, 4 ended."""
    data: Path = tmp_path_factory.mktemp("paging") / "data"

    async def populate(api: MatchServiceAsyncStub) -> dict[spb.MatchStatus.ValueType, set[str]]:
        by_status: dict[spb.MatchStatus.ValueType, set[str]] = {}
        for status in (spb.MATCH_STATUS_WAITING, spb.MATCH_STATUS_RUNNING):
            for _ in range(4):
                info = await create(api, "triathlon", 3, max_deals=1)
                if status == spb.MATCH_STATUS_WAITING:
                    await api.JoinMatch(spb.JoinMatchRequest(match_id=info.match_id), timeout=10)
                else:
                    await join_all(api, info.match_id, 3)
                by_status.setdefault(status, set()).add(info.match_id)
        tables = [await new_table(api) for _ in range(4)]
        await asyncio.gather(*(play_out(api, t) for t in tables))
        by_status[spb.MATCH_STATUS_ENDED] = {t.match_id for t in tables}
        return by_status

    async def scenario(address: str) -> dict[spb.MatchStatus.ValueType, set[str]]:
        async with grpc.aio.insecure_channel(address) as channel:
            return await populate(stub(channel))

    with ServerProcess(data) as running:
        yield Catalog(running, run(scenario(running.address)))


async def every_page(
    api: MatchServiceAsyncStub,
    page_size: int,
    status: spb.MatchStatus.ValueType = spb.MATCH_STATUS_UNSPECIFIED,
) -> list[list[spb.MatchInfo]]:
    pages: list[list[spb.MatchInfo]] = []
    token = ""
    while True:
        page = await api.ListMatches(
            spb.ListMatchesRequest(page_size=page_size, page_token=token, status=status),
            timeout=10,
        )
        assert len(page.matches) <= page_size
        pages.append(list(page.matches))
        assert len(pages) < 100, "paging does not end"
        token = page.next_page_token
        if not token:
            return pages


def test_list_matches_pages_through_every_match_once_by_status(catalog: Catalog) -> None:
    everything = set().union(*catalog.by_status.values())
    assert len(everything) == 12

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(catalog.server.address) as channel:
            api = stub(channel)
            pages = await every_page(api, 5)
            assert [len(p) for p in pages] == [5, 5, 2]
            ids = [m.match_id for p in pages for m in p]
            assert len(ids) == len(set(ids)) and set(ids) == everything
            created = [m.created_unix_ms for p in pages for m in p]
            assert created == sorted(created)
            whole = await api.ListMatches(spb.ListMatchesRequest(), timeout=10)  # 0 means 100
            assert [m.match_id for m in whole.matches] == ids and not whole.next_page_token
            for status, expected in catalog.by_status.items():
                for size in (1, 3, 1000):
                    listed = [m for p in await every_page(api, size, status) for m in p]
                    assert {m.match_id for m in listed} == expected, (status, size)
                    assert len(listed) == len(expected)
                    assert all(m.status == status for m in listed)

    run(scenario())


def _nested(depth: int) -> str:
    return base64.urlsafe_b64encode(b"[" * depth).decode().rstrip("=")


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("garbage", id="word"),
        pytest.param("!!!not base64!!!", id="punctuation"),
        pytest.param("ü", id="non-ascii"),
        pytest.param(base64.urlsafe_b64encode(b"[1, 2]").decode(), id="numbers"),
        pytest.param(base64.urlsafe_b64encode(b"\xff\xfe").decode(), id="not-utf8"),
        pytest.param(base64.urlsafe_b64encode(b'{"a": 1, "b": 2}').decode(), id="object"),
        # regressions: RecursionError escaped as UNKNOWN; a JSON string passed as a key
        pytest.param(_nested(5000), id="deeply-nested-json"),
        pytest.param(
            base64.urlsafe_b64encode(b'"ab"').decode(), id="json-string-of-two-characters"
        ),
    ],
)
def test_a_garbage_page_token_is_invalid_argument(catalog: Catalog, token: str) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(catalog.server.address) as channel:
            call = stub(channel).ListMatches(
                spb.ListMatchesRequest(page_size=5, page_token=token), timeout=10
            )
            assert await refused(call) == grpc.StatusCode.INVALID_ARGUMENT

    run(scenario())


def test_page_size_is_at_most_1000(catalog: Catalog) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(catalog.server.address) as channel:
            api = stub(channel)
            for size in (1001, 5000):
                call = api.ListMatches(spb.ListMatchesRequest(page_size=size), timeout=10)
                assert await refused(call) == grpc.StatusCode.INVALID_ARGUMENT, size
            full = await api.ListMatches(spb.ListMatchesRequest(page_size=1000), timeout=10)
            assert len(full.matches) == 12

    run(scenario())


# --------------------------------------------------------------------------- error codes


def test_every_rpc_on_an_unknown_match_is_not_found(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            api = stub(channel)
            table = await new_table(api)
            token = auth(table.tokens[0])
            for missing in ("0123456789abcdef", "nope", ""):
                calls: list[grpc.aio.UnaryStreamCall[Any, Any] | Awaitable[Any]] = [
                    api.GetMatch(spb.GetMatchRequest(match_id=missing), timeout=10),
                    api.JoinMatch(spb.JoinMatchRequest(match_id=missing), timeout=10),
                    api.SubmitAction(
                        spb.SubmitActionRequest(match_id=missing, seat=0),
                        metadata=token,
                        timeout=10,
                    ),
                    api.StreamEvents(
                        spb.StreamEventsRequest(match_id=missing, seat=0),
                        metadata=token,
                        timeout=10,
                    ),
                    api.WatchMatch(spb.WatchMatchRequest(match_id=missing), timeout=10),
                    api.GetMatchLog(spb.GetMatchLogRequest(match_id=missing), timeout=10),
                ]
                for call in calls:
                    assert await refused(call) == grpc.StatusCode.NOT_FOUND, (missing, call)

    run(scenario())


def test_refusals_get_their_documented_codes(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            api = stub(channel)
            waiting = await create(api, "triathlon", 3, max_deals=1)
            table = await new_table(api)
            other = await new_table(api)
            await act_times(api, table, 2)
            for match_id in (waiting.match_id, table.match_id):
                early = api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=10)
                assert await refused(early) == grpc.StatusCode.FAILED_PRECONDITION
            for seat in (None, 0, 2):
                join = api.JoinMatch(
                    spb.JoinMatchRequest(match_id=table.match_id, seat=seat), timeout=10
                )
                assert await refused(join) == grpc.StatusCode.ALREADY_EXISTS, seat

            def stream(
                seat: int, metadata: tuple[tuple[str, str], ...]
            ) -> grpc.aio.UnaryStreamCall[Any, Any]:
                return api.StreamEvents(
                    spb.StreamEventsRequest(match_id=table.match_id, seat=seat),
                    metadata=metadata,
                    timeout=10,
                )

            cases = [
                (stream(1, auth(table.tokens[0])), grpc.StatusCode.PERMISSION_DENIED),
                (stream(0, auth(table.tokens[2])), grpc.StatusCode.PERMISSION_DENIED),
                (stream(0, ()), grpc.StatusCode.UNAUTHENTICATED),
                (stream(0, (("authorization", table.tokens[0]),)), grpc.StatusCode.UNAUTHENTICATED),
                (stream(0, auth("forged")), grpc.StatusCode.UNAUTHENTICATED),
                (stream(0, auth(other.tokens[0])), grpc.StatusCode.UNAUTHENTICATED),
            ]
            for call, code in cases:
                assert await refused(call) == code
            # the token the match does know still works
            own = seat_feed(api, table.match_id, 0, table.tokens[0], after_seq=LAST)
            assert (await own.snapshot()).viewer_seat == 0
            own.cancel()
            await play_out(api, table)
            ended = api.JoinMatch(spb.JoinMatchRequest(match_id=table.match_id), timeout=10)
            assert await refused(ended) == grpc.StatusCode.FAILED_PRECONDITION
            audit(
                await api.GetMatchLog(
                    spb.GetMatchLogRequest(match_id=table.match_id), timeout=RPC_TIMEOUT
                )
            )

    run(scenario())


# --------------------------------------------------------------------------- concurrency


def test_twenty_matches_played_at_once_all_audit(server: ServerProcess) -> None:
    games: list[tuple[str, int, dict[str, Any]]] = [
        ("triathlon", 3, {"max_deals": 1}),
        ("pentathlon", 3, {"rounds": ["fan_tan"]}),
        ("pentathlon", 4, {"rounds": ["pass"]}),
        ("pentathlon", 5, {"rounds": ["queens"]}),
    ]

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            api = stub(channel)
            tables = []
            for i in range(20):
                game, players, options = games[i % len(games)]
                tables.append(await new_table(api, game, players, **options))
            bots = [
                seat_player(api, table.match_id, seat, table.tokens[seat])
                for table in tables
                for seat in range(len(table.tokens))
            ]

            async def late_watcher(index: int, match_id: str) -> list[pb.Event]:
                """A spectator who arrives mid-game and asks for everything from seq 1."""
                await asyncio.sleep(0.02 * index)
                feed = watch_feed(api, match_id, after_seq=0)
                snap = await feed.snapshot()
                return (await feed.events_through(snap.seq) if snap.seq else []) + (
                    await feed.rest()
                )

            watchers = [
                asyncio.ensure_future(late_watcher(i, t.match_id)) for i, t in enumerate(tables)
            ]
            acted = await asyncio.gather(*bots)
            assert sum(acted) > 20 * 40
            await asyncio.gather(*watchers)
            for table, watcher in zip(tables, watchers, strict=True):
                log = await api.GetMatchLog(
                    spb.GetMatchLogRequest(match_id=table.match_id), timeout=10
                )
                assert log.match.status == spb.MATCH_STATUS_ENDED
                assert len(log.entries) == log.match.last_seq
                assert hashlib.sha256(b"cardarena-seed-v1" + log.seed).hexdigest() == (
                    table.commitment
                )
                audit(log)
                watched = watcher.result()
                assert [e.seq for e in watched] == [e.seq for e in log.entries]
                for seen, entry in zip(watched, log.entries, strict=True):
                    stored = pb.Event.FromString(entry.event)
                    if not stored.HasField("dealt"):
                        assert seen == stored

    run(scenario(), 35)
