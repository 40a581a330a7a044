"""Request ids are scoped to (match, seat), and a repeat must be the same request (issue 10,
defect 1).

Before the fix an id was scoped to the match and a repeat ignored its payload: seat 1 could
submit its own move under the id seat 2 would use next, and seat 2's real move was then
answered with seat 1's event and never applied (the match stalled, or seat 2 timed out).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.engine import PASS
from cardarena.server.app import Server
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import action_of_event, auth, run
from .support import Table, address_of, channel_to, create_table, hosted_turn, served

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

SHARED_ID = "seat2-seq7"
"""One id every seat uses in turn: predictable, as the old reference client's were."""


async def submit(
    api: MatchServiceAsyncStub, table: Table, seat: int, action: int, seq: int, request_id: str
) -> spb.SubmitActionResponse:
    response: spb.SubmitActionResponse = await api.SubmitAction(
        spb.SubmitActionRequest(
            match_id=table.match_id,
            seat=seat,
            action=codec.action_to_pb(action),
            expected_seq=seq,
            request_id=request_id,
        ),
        metadata=auth(table.tokens[seat]),
        timeout=RPC,
    )
    return response


def test_one_seats_request_id_never_answers_another_seats_move(data_dir: Path) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api, seed=bytes(range(32)))
            hosted = server.arena.matches[table.match_id]

            first_seat, seq, legal = hosted_turn(server, table.match_id)
            mine = await submit(api, table, first_seat, legal[0], seq, SHARED_ID)
            assert mine.first_seq == seq + 1

            # The next seat submits its own real move with the same id: it is applied.
            victim, seq2, legal2 = hosted_turn(server, table.match_id)
            assert victim != first_seat
            theirs = await submit(api, table, victim, legal2[0], seq2, SHARED_ID)
            assert theirs.first_seq == seq2 + 1, "answered with another seat's result"
            assert hosted.last_seq == theirs.last_seq > seq2
            recorded = action_of_event(theirs.events[0])
            assert recorded is not None and recorded[0] == victim, theirs.events[0]

            # The same seat repeating the same request: the first result, applied once.
            again = await submit(api, table, victim, legal2[0], seq2, SHARED_ID)
            assert (again.first_seq, again.last_seq) == (theirs.first_seq, theirs.last_seq)
            assert hosted.last_seq == theirs.last_seq
            assert [e.seq for e in again.events] == [e.seq for e in theirs.events]

            # The same id for another expected_seq, or another action: ALREADY_EXISTS.
            other = next(c for c in range(52) if c != legal2[0])
            for action, expected in ((legal2[0], hosted.last_seq), (other, seq2)):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await submit(api, table, victim, action, expected, SHARED_ID)
                assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            assert hosted.last_seq == theirs.last_seq, "a refused repeat changed the match"

    run(scenario())


def test_request_ids_stay_per_seat_after_a_restart(data_dir: Path) -> None:
    """After a restart the ids answered before are only in the store: they are still scoped
    to their seat there, and a repeat is still checked against what it first asked for."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api, seed=bytes(32))
            seat_a, seq_a, legal_a = hosted_turn(server, table.match_id)
            first = await submit(api, table, seat_a, legal_a[0], seq_a, SHARED_ID)
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            hosted = server.arena.matches[table.match_id]
            assert hosted.last_seq == first.last_seq
            again = await submit(api, table, seat_a, legal_a[0], seq_a, SHARED_ID)
            assert (again.first_seq, again.last_seq) == (first.first_seq, first.last_seq)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await submit(api, table, seat_a, legal_a[0], seq_a + 5, SHARED_ID)
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            seat_b, seq_b, legal_b = hosted_turn(server, table.match_id)
            assert seat_b != seat_a
            theirs = await submit(api, table, seat_b, legal_b[0], seq_b, SHARED_ID)
            assert theirs.first_seq == seq_b + 1 and hosted.last_seq == theirs.last_seq

    run(scenario())


def test_the_play_stream_scopes_request_ids_to_its_seat(data_dir: Path) -> None:
    """Over Play: an id another seat used is this seat's own; a repeat answers the first
    result; the same id for another expected_seq is ALREADY_EXISTS (in-stream)."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api, seed=bytes(32))
            hosted = server.arena.matches[table.match_id]
            seat_a, seq_a, legal_a = hosted_turn(server, table.match_id)
            await submit(api, table, seat_a, legal_a[0], seq_a, SHARED_ID)
            seat, seq, legal = hosted_turn(server, table.match_id)
            results = await play_results(
                server,
                table,
                seat,
                [
                    (legal[0], seq, SHARED_ID),
                    (legal[0], seq, SHARED_ID),
                    (legal[0], seq + 1, SHARED_ID),
                ],
            )
            applied, repeated, reused = results
            assert applied.code == 0 and applied.first_seq == seq + 1, applied
            assert (repeated.code, repeated.first_seq, repeated.last_seq) == (
                0,
                applied.first_seq,
                applied.last_seq,
            )
            assert reused.code == grpc.StatusCode.ALREADY_EXISTS.value[0], reused
            assert hosted.last_seq == applied.last_seq

    run(scenario())


async def play_results(
    server: Server, table: Table, seat: int, actions: list[tuple[int, int, str]]
) -> list[spb.ActionResult]:
    """Open Play for ``seat``, send ``actions`` one after the other (each once the previous
    one is answered), and return their results."""
    outgoing: asyncio.Queue[spb.PlayRequest | None] = asyncio.Queue()
    outgoing.put_nowait(spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=seat)))

    async def requests() -> AsyncIterator[spb.PlayRequest]:
        while (request := await outgoing.get()) is not None:
            yield request

    results: list[spb.ActionResult] = []
    async with channel_to(address_of(server)) as (_, api):
        call = api.Play(requests(), metadata=auth(table.tokens[seat]), timeout=RPC)
        pending = list(actions)

        def send_next() -> None:
            action, seq, request_id = pending.pop(0)
            outgoing.put_nowait(
                spb.PlayRequest(
                    act=spb.PlayAction(
                        action=codec.action_to_pb(action), expected_seq=seq, request_id=request_id
                    )
                )
            )

        send_next()
        async for response in call:
            if response.WhichOneof("kind") != "result":
                continue
            results.append(response.result)
            if not pending:
                break
            send_next()
        outgoing.put_nowait(None)
        call.cancel()
    return results


def test_a_create_request_id_reused_with_another_seed_is_already_exists(data_dir: Path) -> None:
    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            first = await api.CreateMatch(
                spb.CreateMatchRequest(game="triathlon", seed=bytes(32), request_id="R1"),
                timeout=RPC,
            )
            again = await api.CreateMatch(
                spb.CreateMatchRequest(game="triathlon", seed=bytes(32), request_id="R1"),
                timeout=RPC,
            )
            assert again.match.match_id == first.match.match_id
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                other = await api.CreateMatch(
                    spb.CreateMatchRequest(game="triathlon", seed=b"\x01" * 32, request_id="R1"),
                    timeout=RPC,
                )
                assert other.match.seed_commitment == first.match.seed_commitment
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS

    run(scenario())


def test_a_repeat_reads_only_its_own_events_and_projects_them_right(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retry late in a long match costs the events it answers, not the whole log (a seat
    could otherwise make the server reread its log as often as it likes), and is projected
    under its own round's rule: in a voluntary-pass Fan Tan the pass reason stays hidden."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            options = {"rounds": ["pass", "fan_tan"], "fan_tan": {"voluntary_pass": True}}
            table = await create_table(api, "pentathlon", 3, options=options, seed=bytes(32))
            hosted = server.arena.matches[table.match_id]
            while not (hosted.readers.voluntary_pass and hosted.engine.legal_actions() == [PASS]):
                seat, seq, legal = hosted_turn(server, table.match_id)
                await submit(api, table, seat, legal[0], seq, f"walk-{seq}")
            seat, seq, _ = hosted_turn(server, table.match_id)
            first = await submit(api, table, seat, PASS, seq, "the-pass")
            reads: list[tuple[int, int | None]] = []
            real = hosted.store.read_events

            async def counted(match_id: str, after_seq: int = 0, limit: int | None = None) -> Any:
                reads.append((after_seq, limit))
                return await real(match_id, after_seq, limit)

            monkeypatch.setattr(hosted.store, "read_events", counted)
            again = await submit(api, table, seat, PASS, seq, "the-pass")
            assert again.events == first.events and first.events[0].HasField("passed")
            assert first.events[0].passed.reason == pb.PASS_REASON_HIDDEN
            assert reads == [(first.first_seq - 1, first.last_seq - first.first_seq + 1)]

    run(scenario())
