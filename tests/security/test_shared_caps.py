"""Caps no crowd can get round, and that spare the players who prove who they are.

The per-address caps alone let 40 loopback addresses hold 2,560 spectator streams of one
match (its players' moves went from 16 ms to 3.2 s), and the cap on Play calls not yet open
refused the project's own benchmark, 800 Play calls of one bot host. Now spectator streams
and unopened Play calls also have a server-wide budget, shared so that no address holds more
than its share while others hold some; one match has at most so many spectators; and a Play
call whose token is a seat's of a running match is not counted at all.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import grpc
import pytest

from cardarena.server.api import streams as streams_module
from cardarena.server.api.limits import FAIR_FLOOR, ClientHosts
from cardarena.server.api.status import Refused
from cardarena.server.api.streams import SEAT_STREAMS, Streams
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run, watch_feed
from ..waiting import eventually
from .support import address_of, channel_to, create_table, served


class Caller:
    """What the caps read of a call: its peer's address."""

    def __init__(self, host: str) -> None:
        self.host = host

    def peer(self) -> str:
        return f"ipv4:{self.host}:40000"

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()


def holding(streams: Streams, host: str, stack: contextlib.ExitStack) -> int:
    """How many spectator places ``host`` gets before it is refused (holding them)."""
    got = 0
    while True:
        try:
            stack.enter_context(streams.watching(Caller(host)))  # type: ignore[arg-type]
        except Refused as refused:
            assert refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            return got
        got += 1


def test_the_server_wide_budget_is_shared_and_leaves_room_for_a_newcomer() -> None:
    streams = Streams(lambda: None, ClientHosts(), watch_streams=64)
    streams.watch_total = 16
    with contextlib.ExitStack() as stack:
        first = holding(streams, "10.0.0.1", stack)
        assert first == 8  # alone, it leaves half for whoever comes next
        # The other half is for addresses that hold little: the floor each, until it is spent.
        assert holding(streams, "10.0.0.2", stack) == FAIR_FLOOR
        assert holding(streams, "10.0.0.3", stack) == FAIR_FLOOR
        assert holding(streams, "10.0.0.4", stack) == 0
    assert not streams._open, "every place is given back"


def test_a_crowd_of_addresses_never_shuts_one_out_below_the_floor() -> None:
    streams = Streams(lambda: None, ClientHosts(), watch_streams=64)
    streams.watch_total = 1000
    with contextlib.ExitStack() as stack:
        got = [holding(streams, f"10.0.1.{n}", stack) for n in range(40)]
        assert max(got) <= 64 and min(got) >= FAIR_FLOOR
        assert sum(got) <= 1000


def test_a_few_addresses_cannot_take_every_place_of_a_match() -> None:
    streams = Streams(lambda: None, ClientHosts(), watch_streams=64)
    with contextlib.ExitStack() as stack:
        for _ in range(streams_module.MATCH_SPECTATORS_PER_ADDRESS):
            stack.enter_context(streams.watching(Caller("10.0.0.1"), "m1"))  # type: ignore[arg-type]
        with pytest.raises(Refused, match="spectator streams of this match from this address"):
            stack.enter_context(streams.watching(Caller("10.0.0.1"), "m1"))  # type: ignore[arg-type]
        stack.enter_context(streams.watching(Caller("10.0.0.1"), "m2"))  # type: ignore[arg-type]


def test_one_match_has_at_most_so_many_spectators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams_module, "MATCH_SPECTATORS", 2)
    streams = Streams(lambda: None, ClientHosts())
    with contextlib.ExitStack() as stack:
        for host in ("10.0.0.1", "10.0.0.2"):
            stack.enter_context(streams.watching(Caller(host), "m1"))  # type: ignore[arg-type]
        with pytest.raises(Refused, match="2 spectator streams of this match"):
            stack.enter_context(streams.watching(Caller("10.0.0.3"), "m1"))  # type: ignore[arg-type]
        stack.enter_context(streams.watching(Caller("10.0.0.3"), "m2"))  # type: ignore[arg-type]


def test_play_calls_with_a_seats_token_are_never_counted_as_unopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot host opens many Play calls at once, from one address, each with a seat's token:
    none is refused for its address, however many have not sent their PlayOpen yet (each
    token holds a few); anonymous ones are."""
    monkeypatch.setattr(streams_module, "OPENING_CALLS", 2)

    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api)
            token = table.tokens[0]
            proven = [api.Play(metadata=auth(token), timeout=RPC) for _ in range(SEAT_STREAMS)]
            for call in proven:
                await call.wait_for_connection()
            held = server.service.streams._open
            await eventually(
                lambda: sum(n for k, n in held.items() if k[0] == "opening-seat") == SEAT_STREAMS,
                what="the proven calls' places",
            )
            # Anyone may make a match and hold a seat's token: one token holds a few at most.
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await api.Play(metadata=auth(token), timeout=RPC).read()
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "this seat's token" in (refused.value.details() or "")
            anonymous = [api.Play(timeout=RPC) for _ in range(2)]
            await eventually(
                lambda: held[("opening", "*")] == 2, what="the anonymous calls' places"
            )
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await api.Play(timeout=RPC).read()
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            for call in proven:  # every one still opens and plays
                await call.write(
                    spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=0))
                )
            for call in proven[:3]:  # a seat holds a few streams at most: these were first
                first = await call.read()
                assert isinstance(first, spb.PlayResponse) and first.HasField("snapshot")
            for call in [*proven, *anonymous]:
                call.cancel()
            feed = watch_feed(api, table.match_id)
            await feed.snapshot()
            feed.cancel()

    run(scenario())
