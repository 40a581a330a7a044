"""Calls that wait for the server's event loop: none refused below the bound, all beyond it.

grpc.aio takes a call up once per turn of its event loop, so while the loop is busy every new
call waits in gRPC core's queue; core refuses (CANCELLED, no message) those that find the queue
full. A closed loop of 5,000 matches keeps more than the 3,000 calls the server used to allow
waiting (issue 16); a flood must still be bounded. Here the loop is held busy on purpose by a
handler that blocks it until the calls sent meanwhile have all reached core (channelz counts
them), where they wait or are refused.
"""

from __future__ import annotations

import asyncio
import collections
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import grpc
import pytest
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # channelz, as grpcio-channelz reads it

from cardarena.server.app import MAX_PENDING_CALLS, ServeConfig, grpc_options
from tests.waiting import wait_until

HOLD_S = 30.0
"""The longest the blocking call holds the event loop, should the test never release it."""


def server_ids() -> set[int]:
    """The channelz ids of the gRPC servers in this process, every page of them (a page holds
    at most 100, and a whole suite's process may hold more)."""
    ids: set[int] = set()
    start = 0
    while True:
        page = json.loads(cygrpc.channelz_get_servers(start))
        found = [int(s["ref"]["serverId"]) for s in page.get("server", [])]
        ids.update(found)
        if page.get("end", False) or not found:
            return ids
        start = max(found) + 1


@dataclass(frozen=True)
class BlockingServer:
    """A grpc.aio server on its own thread; a call with the payload ``b"block"`` holds its
    event loop (``blocked`` set) until ``release`` is set, any other is echoed."""

    address: str
    server_id: int
    blocked: threading.Event
    release: threading.Event

    def calls_started(self) -> int:
        """The calls gRPC core has taken in, whether waiting, answered or refused."""
        data = json.loads(cygrpc.channelz_get_server(self.server_id))["server"]["data"]
        return int(data.get("callsStarted", 0))


@contextmanager
def blocking_server(options: list[tuple[str, int]]) -> Iterator[BlockingServer]:
    """A :class:`BlockingServer` with ``options``, stopped on leaving."""
    started = threading.Event()
    stop = threading.Event()
    blocked = threading.Event()
    release = threading.Event()
    made: list[BlockingServer] = []

    async def echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        if request == b"block":
            blocked.set()
            release.wait(HOLD_S)  # on purpose: nothing else runs on the loop meanwhile
        return request

    async def main() -> None:
        others = server_ids()
        server = grpc.aio.server(options=options)
        (server_id,) = server_ids() - others
        handler = grpc.method_handlers_generic_handler(
            "test.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
        )
        server.add_generic_rpc_handlers((handler,))
        address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        made.append(BlockingServer(address, server_id, blocked, release))
        await server.start()
        started.set()
        await asyncio.to_thread(stop.wait)
        await server.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert started.wait(10), "the server did not start"
    try:
        yield made[0]
    finally:
        release.set()
        stop.set()
        thread.join(10)


def waiting_calls(server: BlockingServer, count: int) -> collections.Counter[str]:
    """Send ``count`` calls while the server's loop is blocked, release it once they have all
    reached the server; the status of each."""
    with grpc.insecure_channel(server.address) as channel:
        call: Callable[..., bytes] = channel.unary_unary("/test.Echo/Echo")
        call(b"warm", timeout=10)  # connected: every call below reaches core at once
        blocker = call.future(b"block", timeout=60)  # type: ignore[attr-defined]
        assert server.blocked.wait(10), "the blocking call did not start"
        futures = [call.future(b"x", timeout=60) for _ in range(count)]  # type: ignore[attr-defined]
        wait_until(
            lambda: server.calls_started() >= 2 + count,
            what=f"the server to take in the {count} calls",
        )
        server.release.set()
        statuses: collections.Counter[str] = collections.Counter()
        for future in [blocker, *futures]:
            try:
                future.result()
                statuses["OK"] += 1
            except grpc.RpcError as error:
                statuses[error.code().name] += 1
    return statuses


def test_the_server_lets_more_calls_wait_than_the_old_limit() -> None:
    """4,000 calls waiting at once (the old bound was 3,000; grpc's own is 1,000): all
    answered, with the options ``serve`` uses by default."""
    assert ServeConfig().max_pending_calls == MAX_PENDING_CALLS >= 20_000
    with blocking_server(grpc_options(ServeConfig().max_pending_calls)) as server:
        assert waiting_calls(server, 4_000) == {"OK": 4_001}


def test_calls_beyond_the_bound_are_refused_and_none_below_it() -> None:
    """With a bound of 100, 300 calls sent while the loop is blocked: the first 100 (and the
    blocked one) are answered, the rest refused, none of them at random below the bound."""
    with blocking_server(grpc_options(100)) as server:
        statuses = waiting_calls(server, 300)
    assert statuses["OK"] + statuses["CANCELLED"] == 301, statuses
    assert 101 <= statuses["OK"] <= 110, statuses  # a few may be taken up before the block


def test_the_bound_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        grpc_options(0)
