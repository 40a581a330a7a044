"""Who may create and cancel, waiting matches that expire, per-peer rate limits (issue 10,
defect 4).

Before the fix anyone could create any number of matches (20,000 unauthenticated creates were
all accepted and never expired) and nothing could end a match early. Now an operator token
(``--admin-token`` or, better, env ``CARDARENA_ADMIN_TOKEN``) locks creating and cancelling;
CancelMatch (the operator, or the match's creator secret) and the expiry of waiting matches
end a match with MatchCancelled and the seed revealed, and the log audits clean; creates and
joins are rate-limited per peer, except for the operator. These run the real ``cardarena
serve`` so that the flags, the environment and the server's log are the ones deployed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.clients.audit import audit_log
from cardarena.server.api import Access
from cardarena.server.api.limits import Rate
from cardarena.server.api.peers import FORWARDED_BY
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from .. import calls
from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..serverproc import ServerProcess, log_records
from ..stores import postgres_schema
from ..waiting import eventually
from .support import Table, channel_to, code_of, create_table, secret, served

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

RETRY_AFTER = "cardarena-retry-after-ms"


async def outcome(call: Awaitable[object]) -> tuple[grpc.StatusCode, dict[str, Any]]:
    """A call's status code and its trailing metadata."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code(), dict(error.trailing_metadata() or ())
    return grpc.StatusCode.OK, {}


async def audited(api: MatchServiceAsyncStub, match_id: str) -> spb.GetMatchLogResponse:
    """The match's log, which must audit clean."""
    log: spb.GetMatchLogResponse = await api.GetMatchLog(
        spb.GetMatchLogRequest(match_id=match_id), timeout=RPC
    )
    report = audit_log(log)
    assert report.ok, report.failure
    return log


def ending(log: spb.GetMatchLogResponse) -> list[str]:
    return [pb.Event.FromString(e.event).WhichOneof("kind") or "" for e in log.entries[-2:]]


def cancel_reason(log: spb.GetMatchLogResponse) -> str:
    reason: str = pb.Event.FromString(log.entries[-2].event).match_cancelled.reason
    return reason


async def play_a_little(api: MatchServiceAsyncStub, table: Table, actions: int = 4) -> None:
    await calls.act_times(api, calls.Table(table.match_id, table.tokens), actions)


def test_a_locked_server_creates_and_cancels_for_its_operator_only(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator = secret()
    creator = secret()
    monkeypatch.setenv("CARDARENA_ADMIN_TOKEN", operator)
    seat_tokens: list[str] = []

    async def scenario(address: str) -> None:
        async with channel_to(address) as (_, api):
            request = spb.CreateMatchRequest(game="triathlon")
            create = api.CreateMatch
            assert await code_of(create(request, timeout=RPC)) == grpc.StatusCode.UNAUTHENTICATED
            assert (
                await code_of(create(request, metadata=(("authorization", operator),), timeout=RPC))
                == grpc.StatusCode.UNAUTHENTICATED
            )
            assert await code_of(create(request, metadata=auth(secret()), timeout=RPC)) == (
                grpc.StatusCode.PERMISSION_DENIED
            )
            assert await code_of(create(request, metadata=auth(operator[:-1]), timeout=RPC)) == (
                grpc.StatusCode.PERMISSION_DENIED
            )
            # The operator is not rate-limited (--create-rate 5/s,5): twelve at once.
            created = await asyncio.gather(
                *(create(request, metadata=auth(operator), timeout=RPC) for _ in range(12))
            )
            assert len({c.match.match_id for c in created}) == 12

            by_operator = await create_table(api, metadata=auth(operator))
            by_creator = await create_table(api, metadata=auth(operator), creator_secret=creator)
            waiting = await create_table(
                api, metadata=auth(operator), creator_secret=creator, seat_all=False
            )
            seat_tokens.extend(by_operator.tokens + by_creator.tokens)
            await play_a_little(api, by_operator)
            await play_a_little(api, by_creator)

            def cancel(table: Table, *metadata: tuple[str, str]) -> Awaitable[object]:
                return api.CancelMatch(
                    spb.CancelMatchRequest(match_id=table.match_id, reason="maintenance"),
                    metadata=metadata,
                    timeout=RPC,
                )

            # Neither a seat, nor a stranger, nor the creator of another match may cancel.
            for table in (by_operator, by_creator):
                assert await code_of(cancel(table)) == grpc.StatusCode.UNAUTHENTICATED
                for wrong in (table.tokens[0], secret()):
                    assert await code_of(cancel(table, *auth(wrong))) == (
                        grpc.StatusCode.PERMISSION_DENIED
                    )
            assert await code_of(cancel(by_operator, *auth(creator))) == (
                grpc.StatusCode.PERMISSION_DENIED
            )
            # A bad reason is refused before the match is even looked up.
            for match_id in ("0123456789abcdef", ""):
                bad = spb.CancelMatchRequest(match_id=match_id, reason="r" * 201)
                refused = api.CancelMatch(bad, metadata=auth(operator), timeout=RPC)
                assert await code_of(refused) == grpc.StatusCode.INVALID_ARGUMENT

            # A seat's stream sees the end: MatchCancelled, SeedRevealed, then a clean end.
            feed = calls.seat_feed(api, by_operator.match_id, 0, by_operator.tokens[0], 1 << 62)
            await feed.snapshot()
            done = await api.CancelMatch(
                spb.CancelMatchRequest(match_id=by_operator.match_id, reason="maintenance"),
                metadata=auth(operator),
                timeout=RPC,
            )
            assert done.match.status == spb.MATCH_STATUS_ENDED and done.match.cancelled
            assert done.match.seed == by_operator.seed
            rest = await feed.rest()
            assert [e.WhichOneof("kind") for e in rest] == ["match_cancelled", "seed_revealed"]
            for table, secret_used in ((by_creator, creator), (waiting, creator)):
                answer = await api.CancelMatch(
                    spb.CancelMatchRequest(match_id=table.match_id),
                    metadata=auth(secret_used),
                    timeout=RPC,
                )
                assert answer.match.cancelled and answer.match.seed == table.seed

            for table, who in (
                (by_operator, "cancelled by the operator: maintenance"),
                (by_creator, "cancelled by its creator"),
                (waiting, "cancelled by its creator"),
            ):
                log = await audited(api, table.match_id)
                assert ending(log) == ["match_cancelled", "seed_revealed"]
                assert cancel_reason(log) == who
                assert log.seed == table.seed
            # An ended match: nothing more to cancel, nothing more to play.
            assert await code_of(cancel(by_operator, *auth(operator))) == (
                grpc.StatusCode.FAILED_PRECONDITION
            )
            stale = await api.GetMatch(spb.GetMatchRequest(match_id=by_creator.match_id))
            assert (
                await code_of(
                    api.SubmitAction(
                        spb.SubmitActionRequest(
                            match_id=by_creator.match_id,
                            seat=0,
                            action=codec.action_to_pb(0),
                            expected_seq=stale.match.last_seq,
                            request_id="late",
                        ),
                        metadata=auth(by_creator.tokens[0]),
                        timeout=RPC,
                    )
                )
                == grpc.StatusCode.FAILED_PRECONDITION
            )

    with ServerProcess(data_dir, extra=["--create-rate", "5/s,5"]) as server:
        assert server.process is not None
        cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        assert operator.encode() not in cmdline
        run(scenario(server.address), 60)
        assert server.terminate() == 0
    text = server.stderr_path.read_text()
    records = log_records(server.stderr_path)
    assert records[0]["event"] == "server_locked", records[0]
    for hidden in (operator, creator, *seat_tokens):
        assert hidden not in text, "a secret is in the server's log"


def test_an_open_server_says_so_limits_peers_and_expires_waiting_matches(data_dir: Path) -> None:
    async def scenario(address: str) -> None:
        async with channel_to(address) as (_, api):
            # --create-rate 5/s,5: of six creates at once, the sixth is refused with a hint.
            request = spb.CreateMatchRequest(game="triathlon", players=3)
            answers = await asyncio.gather(
                *(outcome(api.CreateMatch(request, timeout=RPC)) for _ in range(6))
            )
            codes = sorted(code.name for code, _ in answers)
            assert codes == ["OK"] * 5 + ["RESOURCE_EXHAUSTED"], codes
            (hint,) = [t for code, t in answers if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert int(hint[RETRY_AFTER]) > 0, hint
            listed = await api.ListMatches(spb.ListMatchesRequest(), timeout=RPC)
            waiting = [m.match_id for m in listed.matches]
            assert len(waiting) == 5

            # --waiting-expiry 0.5: a match whose seats stay free ends cancelled (and one
            # seat taken does not keep it); a match that started is not touched.
            running, partly = waiting[0], waiting[1]
            tokens = await calls.join_all(api, running, 3)
            await api.JoinMatch(spb.JoinMatchRequest(match_id=partly, seat=0), timeout=RPC)

            async def all_but_the_first_expired() -> list[spb.MatchInfo] | None:
                infos = [
                    (await api.GetMatch(spb.GetMatchRequest(match_id=m), timeout=RPC)).match
                    for m in waiting
                ]
                return infos if all(i.status == spb.MATCH_STATUS_ENDED for i in infos[1:]) else None

            infos = await eventually(all_but_the_first_expired, within=8, what="the expiries")
            assert infos[0].status == spb.MATCH_STATUS_RUNNING
            assert all(i.cancelled and len(i.seed) == 32 for i in infos[1:])
            for match_id in waiting[1:3]:
                log = await audited(api, match_id)
                assert ending(log) == ["match_cancelled", "seed_revealed"]
                assert cancel_reason(log).startswith("expired")
            await play_a_little(api, Table(running, 3, tokens), 2)

            # --join-rate 5/s,5, once the bucket is full again: the sixth of six joins at
            # once is refused before the match is even looked up.
            await asyncio.sleep(1.2)
            joins = await asyncio.gather(
                *(
                    outcome(api.JoinMatch(spb.JoinMatchRequest(match_id=f"nope{i}"), timeout=RPC))
                    for i in range(6)
                )
            )
            codes = sorted(code.name for code, _ in joins)
            assert codes == ["NOT_FOUND"] * 5 + ["RESOURCE_EXHAUSTED"], codes

    extra = ["--create-rate", "5/s,5", "--join-rate", "5/s,5", "--waiting-expiry", "0.5"]
    with ServerProcess(data_dir, extra=extra) as server:
        run(scenario(server.address), 60)
    first = log_records(server.stderr_path)[0]
    assert first["event"] == "server_open" and first["level"] == "warning", first


def test_a_client_cannot_pass_for_a_replica_to_escape_the_rate_limits(data_dir: Path) -> None:
    """Replicas forward calls to the owner unthrottled, marked with a header; a client that
    sends the header itself must still be limited. (A replica needs PostgreSQL.)"""

    async def scenario(url: str) -> None:
        access = Access(create_rate=Rate(5.0, 5), join_rate=Rate(5.0, 5))
        async with (
            served(data_dir, access=access, store=url) as server,
            channel_to(f"127.0.0.1:{server.port}") as (_, api),
        ):

            async def creates(metadata: tuple[tuple[str, str], ...]) -> list[str]:
                answers = await asyncio.gather(
                    *(
                        outcome(
                            api.CreateMatch(
                                spb.CreateMatchRequest(game="triathlon"),
                                metadata=metadata,
                                timeout=RPC,
                            )
                        )
                        for _ in range(6)
                    )
                )
                return sorted(code.name for code, _ in answers)

            assert await creates(()) == ["OK"] * 5 + ["RESOURCE_EXHAUSTED"]
            # The bucket is empty now: a disguised client must get nothing more.
            disguised = await creates(((FORWARDED_BY, "not-a-replica"),))
            assert disguised == ["RESOURCE_EXHAUSTED"] * 6, disguised

    with postgres_schema() as url:
        run(scenario(url), 60)
