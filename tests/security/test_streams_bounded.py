"""A client that stops reading cannot grow the server's memory or hold a match up (issue 10,
defect 2).

Before the fix the Play stream's outgoing queue was unbounded: a client that wrote actions and
never read made the server keep every answer (300k messages: +94 MB, still held after the
call). Now every per-call queue is bounded and a reader that falls behind is dropped with
UNAVAILABLE (it resumes from its last seq). The readers that "never read" here use a channel
with a 1 KiB HTTP/2 window and no BDP probing, so the server's answers really pile up on the
server's side instead of in the client's transport buffers.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import grpc

from cardarena.server.api.play import PLAY_QUEUE
from cardarena.server.hosting import SUBSCRIBER_QUEUE
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from ..serverproc import ServerProcess, log_records
from .support import (
    address_of,
    channel_to,
    create_table,
    play_hosted_to_end,
    served,
    settled_rss_kib,
)

NOT_READING = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]
"""A client channel that takes in at most ~1 KiB of a stream it does not read."""
MAX_GROWTH_KIB = 60 * 1024
"""Generous: a bounded server grows by a few MB here; the unbounded one by hundreds."""
OVERFLOW = PLAY_QUEUE + 200
"""Actions a non-reading client writes: more answers than its queue holds, so the server
drops it; and few enough that they fit the server's fixed receive window once it stops
reading the dropped call (without bandwidth-delay probing, a write past that window would
wait for ever, and a write still pending when the call ends fails INTERNAL on the client)."""
LONG_MATCH = {"rounds": ["pass", "clubs", "queens", "grand", "trumps", "finale", "fan_tan"] * 3}
"""A Heptathlon three times over: about 1,300 events, more than a subscriber's queue holds."""


async def read_to_end(call: Any, seconds: float = RPC) -> tuple[int, grpc.StatusCode]:
    """Read a stream until it ends: how many messages came first, and its status."""
    got = 0
    try:
        while True:
            message = await asyncio.wait_for(call.read(), seconds)
            if message is grpc.aio.EOF:
                return got, grpc.StatusCode.OK
            got += 1
    except grpc.aio.AioRpcError as error:
        return got, error.code()


async def write_without_reading(
    address: str, pid: int, messages: int, request_id: str, *, then_read: bool = True
) -> tuple[int, int, grpc.StatusCode]:
    """Open Play for a seat, write ``messages`` actions (each refused: the request id is not
    valid) and read nothing after the snapshot. Returns the server's RSS growth in KiB after
    writing, then (if ``then_read``) how many messages the client got once it read, and how
    the call ended."""
    async with channel_to(address) as (_, api):
        table = await create_table(api)
        async with channel_to(address, NOT_READING) as (_, slow):
            call = slow.Play(metadata=auth(table.tokens[0]), timeout=60)
            await call.write(spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=0)))
            await asyncio.wait_for(call.read(), RPC)  # the snapshot: the call is open
            before = await settled_rss_kib(pid)
            for i in range(messages):
                act = spb.PlayAction(expected_seq=i, request_id=f"{i} {request_id}")
                await asyncio.wait_for(call.write(spb.PlayRequest(act=act)), RPC)
            growth = await settled_rss_kib(pid) - before
            got, code = await read_to_end(call) if then_read else (0, grpc.StatusCode.OK)
            call.cancel()
        # The server still serves everyone else.
        info = await api.GetMatch(spb.GetMatchRequest(match_id=table.match_id), timeout=RPC)
        assert info.match.status == spb.MATCH_STATUS_RUNNING
    return growth, got, code


def test_a_play_client_that_stops_reading_after_its_snapshot_is_dropped_with_memory_bounded(
    data_dir: Path,
) -> None:
    with ServerProcess(data_dir) as server:
        assert server.process is not None
        growth, got, code = run(
            write_without_reading(server.address, server.process.pid, OVERFLOW, "bogus"), 60
        )
    assert growth < MAX_GROWTH_KIB, f"the server grew by {growth} KiB"
    assert code == grpc.StatusCode.UNAVAILABLE, (got, code)
    # With the snapshot it read first, what the server kept for it stays under the queue.
    assert got + 1 < PLAY_QUEUE, f"{got} answers were kept for a client that did not read"


def test_a_dropped_play_client_is_not_logged_as_a_server_fault(data_dir: Path) -> None:
    with ServerProcess(data_dir) as server:
        assert server.process is not None
        _, _, code = run(
            write_without_reading(server.address, server.process.pid, OVERFLOW, "bogus"), 60
        )
        server.terminate()
    assert code == grpc.StatusCode.UNAVAILABLE
    faults = [r for r in log_records(server.stderr_path) if r.get("level") in ("error", "critical")]
    assert not faults, faults[0]


def test_echoed_request_ids_cannot_fill_the_servers_memory(data_dir: Path) -> None:
    with ServerProcess(data_dir) as server:
        assert server.process is not None
        growth, _, _ = run(
            write_without_reading(
                server.address, server.process.pid, 1000, "x" * 200_000, then_read=False
            ),
            60,
        )
    assert growth < MAX_GROWTH_KIB, f"the server grew by {growth} KiB"


def test_stalled_stream_readers_are_dropped_and_the_match_goes_on(data_dir: Path) -> None:
    """A spectator stream and a seat's stream that stop reading after their snapshot, while
    a long match is played at full speed: the match finishes, a reader that keeps up gets
    every event and a clean end, and each stalled reader, once it reads again, gets a few
    messages and UNAVAILABLE (it was dropped at once, not left holding a full queue)."""

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api, "heptathlon", 5, options=LONG_MATCH)
            hosted = server.arena.matches[table.match_id]
            follower = api.WatchMatch(spb.WatchMatchRequest(match_id=table.match_id))

            async def follow() -> list[int]:
                seqs = []
                async for message in follower:
                    if message.WhichOneof("kind") == "event":
                        seqs.append(message.event.seq)
                return seqs

            async with channel_to(address_of(server), NOT_READING) as (_, slow):
                stalled: list[Any] = [
                    slow.WatchMatch(spb.WatchMatchRequest(match_id=table.match_id)),
                    slow.StreamEvents(
                        spb.StreamEventsRequest(match_id=table.match_id, seat=1),
                        metadata=auth(table.tokens[1]),
                    ),
                ]
                for call in stalled:
                    first = await asyncio.wait_for(call.read(), RPC)
                    assert first.WhichOneof("kind") == "snapshot"
                following = asyncio.create_task(follow())
                await play_hosted_to_end(server, api, table)
                assert hosted.ended and hosted.last_seq > SUBSCRIBER_QUEUE + 100
                seen = await asyncio.wait_for(following, RPC)
                assert seen == list(range(1, hosted.last_seq + 1))
                assert not hosted.readers.subscribers
                for call in stalled:
                    got, code = await read_to_end(call)
                    assert code == grpc.StatusCode.UNAVAILABLE, (got, code)
                    assert got < SUBSCRIBER_QUEUE // 2, f"{got} messages kept for a stalled reader"

    run(scenario(), 60)


def test_a_drain_does_not_log_open_play_streams_as_server_faults(data_dir: Path) -> None:
    async def scenario(server: ServerProcess) -> list[grpc.StatusCode]:
        assert server.process is not None
        async with channel_to(server.address) as (_, api):
            table = await create_table(api)
            calls = []
            for seat in range(table.players):
                call = api.Play(metadata=auth(table.tokens[seat]), timeout=30)
                await call.write(
                    spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=seat))
                )
                await asyncio.wait_for(call.read(), RPC)  # the snapshot: the call is open
                calls.append(call)
            server.process.send_signal(signal.SIGTERM)
            return [(await read_to_end(call))[1] for call in calls]

    with ServerProcess(data_dir) as server:
        assert server.process is not None
        codes = run(scenario(server), 30)
        assert server.process.wait(20) == 0
    assert codes == [grpc.StatusCode.UNAVAILABLE] * 3
    faults = [r for r in log_records(server.stderr_path) if r.get("level") in ("error", "critical")]
    assert not faults, faults[0]
