"""Calls that wait for the server's event loop: none refused below the bound, all beyond it.

grpc.aio takes a call up once per turn of its event loop, so while the loop is busy every new
call waits in gRPC core's queue; core refuses (CANCELLED, no message) those that find the queue
full. A closed loop of 5,000 matches keeps more than the 3,000 calls the server used to allow
waiting (issue 16); a flood must still be bounded. Here the loop is held busy on purpose by a
handler that blocks it, and the calls sent meanwhile all wait in core.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import grpc
import pytest

from cardarena.server.app import MAX_PENDING_CALLS, ServeConfig, grpc_options

BLOCK_S = 1.5
"""How long the blocking call holds the event loop: long enough to send every call."""


@contextmanager
def blocking_server(options: list[tuple[str, int]]) -> Iterator[str]:
    """A grpc.aio server, with ``options``, on its own thread; a call with the payload
    ``b"block"`` holds its event loop for ``BLOCK_S``, any other is echoed."""
    started = threading.Event()
    stop = threading.Event()
    address: list[str] = []

    async def echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        if request == b"block":
            time.sleep(BLOCK_S)  # on purpose: nothing else runs on the loop meanwhile
        return request

    async def main() -> None:
        server = grpc.aio.server(options=options)
        handler = grpc.method_handlers_generic_handler(
            "test.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
        )
        server.add_generic_rpc_handlers((handler,))
        address.append(f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}")
        await server.start()
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert started.wait(10), "the server did not start"
    try:
        yield address[0]
    finally:
        stop.set()
        thread.join(10)


def waiting_calls(address: str, count: int) -> collections.Counter[str]:
    """Send ``count`` calls while the server's loop is blocked; the status of each."""
    with grpc.insecure_channel(address) as channel:
        call: Callable[..., bytes] = channel.unary_unary("/test.Echo/Echo")
        call(b"warm", timeout=10)  # connected: every call below reaches core at once
        blocker = call.future(b"block", timeout=30)  # type: ignore[attr-defined]
        time.sleep(0.2)  # the loop is now blocked
        futures = [call.future(b"x", timeout=30) for _ in range(count)]  # type: ignore[attr-defined]
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
    with blocking_server(grpc_options(ServeConfig().max_pending_calls)) as address:
        assert waiting_calls(address, 4_000) == {"OK": 4_001}


def test_calls_beyond_the_bound_are_refused_and_none_below_it() -> None:
    """With a bound of 100, 300 calls sent while the loop is blocked: the first 100 (and the
    blocked one) are answered, the rest refused, none of them at random below the bound."""
    with blocking_server(grpc_options(100)) as address:
        statuses = waiting_calls(address, 300)
    assert statuses["OK"] + statuses["CANCELLED"] == 301, statuses
    assert 101 <= statuses["OK"] <= 110, statuses  # a few may be taken up before the block


def test_the_bound_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        grpc_options(0)
