"""A real server's answers to many requests: paging through its matches, the documented error
code of every refusal, and many matches played at once."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.engine import SPECTATOR, Projector
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import (
    LAST,
    RPC_TIMEOUT,
    act_times,
    audit,
    auth,
    create,
    join_all,
    new_table,
    play_out,
    refused,
    run,
    seat_feed,
    seat_player,
    stub,
    watch_feed,
    with_api,
)
from ..serverproc import ServerProcess
from ..waiting import eventually

if TYPE_CHECKING:
    from pathlib import Path

    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration


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
    *,
    newest_first: bool = False,
) -> list[list[spb.MatchInfo]]:
    pages: list[list[spb.MatchInfo]] = []
    token = ""
    while True:
        page = await api.ListMatches(
            spb.ListMatchesRequest(
                page_size=page_size, page_token=token, status=status, newest_first=newest_first
            ),
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

    async def scenario(api: MatchServiceAsyncStub) -> None:
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

    with_api(catalog.server.address, scenario)


def test_list_matches_newest_first_is_the_reverse_order_page_by_page(catalog: Catalog) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        oldest = [m.match_id for p in await every_page(api, 1000) for m in p]
        pages = await every_page(api, 5, newest_first=True)
        assert [len(p) for p in pages] == [5, 5, 2]
        assert [m.match_id for p in pages for m in p] == oldest[::-1]
        created = [m.created_unix_ms for p in pages for m in p]
        assert created == sorted(created, reverse=True)
        for status, expected in catalog.by_status.items():
            listed = [
                m.match_id for p in await every_page(api, 3, status, newest_first=True) for m in p
            ]
            assert listed == [i for i in oldest[::-1] if i in expected], status

    with_api(catalog.server.address, scenario)


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
    async def scenario(api: MatchServiceAsyncStub) -> None:
        for size in (1001, 5000):
            call = api.ListMatches(spb.ListMatchesRequest(page_size=size), timeout=10)
            assert await refused(call) == grpc.StatusCode.INVALID_ARGUMENT, size
        full = await api.ListMatches(spb.ListMatchesRequest(page_size=1000), timeout=10)
        assert len(full.matches) == 12

    with_api(catalog.server.address, scenario)


def test_a_listing_of_one_game_is_that_games_matches_and_names_only_real_games(
    server: ServerProcess,
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        mine = {(await create(api, "crazy_sixes", 3)).match_id for _ in range(3)}
        await create(api, "pentathlon", 3)
        listed: list[spb.MatchInfo] = []
        token = ""
        while True:
            request = spb.ListMatchesRequest(page_size=2, page_token=token, game="crazy_sixes")
            page = await api.ListMatches(request, timeout=10)
            assert 0 < len(page.matches) <= 2  # every page a full one of the filter
            listed.extend(page.matches)
            token = page.next_page_token
            if not token:
                break
        assert {m.game for m in listed} == {"crazy_sixes"}
        assert mine <= {m.match_id for m in listed}
        for game in ("poker", "x" * 10_000, "crazy_sixes\n"):
            call = api.ListMatches(spb.ListMatchesRequest(game=game), timeout=10)
            assert await refused(call) == grpc.StatusCode.INVALID_ARGUMENT, game[:20]

    with_api(server.address, scenario)


# --------------------------------------------------------------------------- error codes


def test_every_rpc_on_an_unknown_match_is_not_found(server: ServerProcess) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
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

    with_api(server.address, scenario)


def test_refusals_get_their_documented_codes(server: ServerProcess) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
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

    with_api(server.address, scenario)


# --------------------------------------------------------------------------- concurrency


def test_twenty_matches_played_at_once_all_audit(server: ServerProcess) -> None:
    games: list[tuple[str, int, dict[str, Any]]] = [
        ("triathlon", 3, {"max_deals": 1}),
        ("pentathlon", 3, {"rounds": ["fan_tan"]}),
        ("pentathlon", 4, {"rounds": ["pass"]}),
        ("pentathlon", 5, {"rounds": ["queens"]}),
    ]

    async def scenario(api: MatchServiceAsyncStub) -> None:
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
            """A spectator who arrives mid-game (the later the higher its ``index``: once
            ``index + 1`` more events are written, or the match is over) and asks for
            everything from seq 1."""
            get = spb.GetMatchRequest(match_id=match_id)
            arrives = (await api.GetMatch(get, timeout=10)).match.last_seq + index + 1

            async def under_way() -> bool:
                info = (await api.GetMatch(get, timeout=10)).match
                return info.last_seq >= arrives or info.status == spb.MATCH_STATUS_ENDED

            await eventually(under_way, what=f"match {match_id} under way")
            feed = watch_feed(api, match_id, after_seq=0)
            snap = await feed.snapshot()
            return (await feed.events_through(snap.seq) if snap.seq else []) + (await feed.rest())

        watchers = [
            asyncio.ensure_future(late_watcher(i, t.match_id)) for i, t in enumerate(tables)
        ]
        acted = await asyncio.gather(*bots)
        assert sum(acted) > 20 * 40
        await asyncio.gather(*watchers)
        for table, watcher in zip(tables, watchers, strict=True):
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=table.match_id), timeout=10)
            assert log.match.status == spb.MATCH_STATUS_ENDED
            assert len(log.entries) == log.match.last_seq
            assert hashlib.sha256(b"cardarena-seed-v1" + log.seed).hexdigest() == (table.commitment)
            audit(log)
            watched = watcher.result()
            assert [e.seq for e in watched] == [e.seq for e in log.entries]
            projector = Projector(SPECTATOR)
            for seen, entry in zip(watched, log.entries, strict=True):
                stored = pb.Event.FromString(entry.event)
                event = codec.event_from_pb(stored)
                shown = projector.project(event) if event is not None else None
                if stored.HasField("dealt"):
                    continue
                if shown != event:  # a Joker under the spectator's own number for it
                    assert codec.event_from_pb(seen) == shown
                else:
                    assert seen == stored

    with_api(server.address, scenario, 35)
