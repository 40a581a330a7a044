"""No client can slow other people's matches by opening streams without end.

Session 10's adversary opened 500 idle spectator streams on a match: every event then cost
500 messages, and its players' 200 moves took 6.5 s instead of 0.9. Now spectator streams
(WatchMatch and WatchTournament) are capped per client address (``serve --watch-streams``),
and a seat's streams (StreamEvents and Play) per seat; a closed stream frees its place. The
gRPC-Web gateway vouches for each browser's address, so that browsers do not share the
gateway's own.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.api import play as play_module
from cardarena.server.api import streams as streams_module
from cardarena.server.api.grpcweb.http import Request
from cardarena.server.api.grpcweb.proxy import prepare_call
from cardarena.server.api.limits import WEB_CLIENT, ClientHosts
from cardarena.server.api.streams import SEAT_STREAMS
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import SERVICE, auth, run, seat_feed, watch_feed
from ..waiting import eventually
from .support import address_of, channel_to, create_table, play_hosted_to_end, served

CAP = 3


async def refusal(feed: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await feed.snapshot()
    return refused.value


def test_spectator_streams_are_capped_per_address_and_a_closed_one_frees_its_place(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with (
            served(tmp_path, watch_streams=CAP) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            table = await create_table(api)
            other = await create_table(api)
            watching = [watch_feed(api, table.match_id) for _ in range(CAP - 1)]
            elsewhere = watch_feed(api, other.match_id)  # the cap is per address
            for feed in [*watching, elsewhere]:
                await feed.snapshot()
            error = await refusal(watch_feed(api, table.match_id))
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"{CAP} spectator streams from this address" in (error.details() or "")
            # The seats' own streams are not spectators': they still open.
            seat = seat_feed(api, table.match_id, 0, table.tokens[0])
            await seat.snapshot()
            seat.cancel()

            watching.pop(0).cancel()

            async def reopened() -> Any:
                feed = watch_feed(api, table.match_id)
                try:
                    await feed.snapshot()
                except grpc.aio.AioRpcError as refused:
                    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    return None
                return feed

            watching.append(await eventually(reopened, what="the closed stream's place"))
            # The match plays to its end, and its spectators see all of it.
            await play_hosted_to_end(server, api, table)
            for feed in watching:
                assert (await asyncio.wait_for(feed.rest(), RPC))[-1].HasField("seed_revealed")
            elsewhere.cancel()

    run(scenario())


def test_a_seats_streams_are_capped_together_and_other_seats_are_not_touched(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api)
            mine = [seat_feed(api, table.match_id, 0, table.tokens[0]) for _ in range(SEAT_STREAMS)]
            for feed in mine:
                await feed.snapshot()
            error = await refusal(seat_feed(api, table.match_id, 0, table.tokens[0]))
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"{SEAT_STREAMS} streams of seat 0 of this match" in (error.details() or "")
            play = api.Play(metadata=auth(table.tokens[0]), timeout=RPC)
            await play.write(spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=0)))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await play.read()
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            other = seat_feed(api, table.match_id, 1, table.tokens[1])
            await other.snapshot()
            for feed in [*mine, other]:
                feed.cancel()

    run(scenario())


def test_play_calls_that_never_open_are_capped_per_address_and_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Play call names its seat only in its first message: until then it holds no seat's
    place, and an adversary held 20,000 such calls (500 MiB of the server's memory) for as
    long as it liked. Now an address holds a few at most, each for ``OPEN_SECONDS``."""
    monkeypatch.setattr(streams_module, "OPENING_CALLS", CAP)
    monkeypatch.setattr(play_module, "OPEN_SECONDS", 0.5)  # time that must pass, bounded

    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api)
            silent = [api.Play(timeout=RPC) for _ in range(CAP)]
            held = server.service.streams._open
            await eventually(
                lambda: sum(n for k, n in held.items() if k[0] == "opening" and k[1] != "*") == CAP,
                what="the silent calls' places",
            )
            one_more = api.Play(timeout=RPC)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await one_more.read()
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"{CAP} Play calls without a PlayOpen" in (refused.value.details() or "")
            for call in silent:
                with pytest.raises(grpc.aio.AioRpcError) as ended:
                    await call.read()
                assert ended.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                assert "no PlayOpen within 0.5 s" in (ended.value.details() or "")
            # Their places are free again, and a call that opens in time plays.
            play = api.Play(metadata=auth(table.tokens[0]), timeout=RPC)
            await play.write(spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=0)))
            first = await play.read()
            assert isinstance(first, spb.PlayResponse) and first.HasField("snapshot")
            play.cancel()

    run(scenario())


class Context:
    """What ClientHosts reads of a call."""

    def __init__(self, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.metadata = metadata

    def peer(self) -> str:
        return "ipv4:127.0.0.1:40123"

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata


def test_only_the_gateways_secret_names_another_address() -> None:
    secret = "s" * 43
    hosts = ClientHosts(secret)
    assert hosts.of(Context()) == "ipv4:127.0.0.1"
    assert hosts.of(Context(((WEB_CLIENT, f"{secret} 203.0.113.9"),))) == "web:203.0.113.9"
    for forged in (f"{'t' * 43} 203.0.113.9", f"{secret}", "203.0.113.9", ""):
        assert hosts.of(Context(((WEB_CLIENT, forged),))) == "ipv4:127.0.0.1", forged
    # A server without a gateway believes no such claim, whatever it carries.
    assert ClientHosts().of(Context(((WEB_CLIENT, f"{secret} 203.0.113.9"),))) == ("ipv4:127.0.0.1")


def test_the_gateway_vouches_itself_and_passes_no_browsers_claim() -> None:
    forged = {"content-type": "application/grpc-web+proto", WEB_CLIENT: "guess 203.0.113.9"}
    request = Request("POST", f"/{SERVICE}/ListGames", forged, b"\x00\x00\x00\x00\x00")
    assert prepare_call(request, 1024).metadata == ()
    vouched = prepare_call(request, 1024, "secret 198.51.100.7").metadata
    assert vouched == ((WEB_CLIENT, "secret 198.51.100.7"),)


def first_frame_flags(port: int, message: bytes) -> int:
    """Open WatchMatch through the gateway: the flags byte of the first gRPC-Web frame (0: a
    message, 0x80: the trailers that end the call)."""
    body = struct.pack(">BI", 0, len(message)) + message
    head = (
        f"POST /{SERVICE}/WatchMatch HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"content-type: application/grpc-web+proto\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=RPC) as sock:
        sock.sendall(head.encode() + body)
        seen = b""
        while b"\r\n\r\n" not in seen or not seen.split(b"\r\n\r\n", 1)[1].count(b"\r\n"):
            chunk = sock.recv(65536)
            assert chunk, f"the gateway closed first: {seen[:300]!r}"
            seen += chunk
        rest = seen.split(b"\r\n\r\n", 1)[1].split(b"\r\n", 1)[1]
        while not rest:
            rest += sock.recv(65536)
        return rest[0]


def test_through_the_gateway_each_browser_counts_as_its_own_address(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            served(tmp_path, watch_streams=CAP, web="127.0.0.1:0") as server,
            channel_to(address_of(server)) as (_, api),
        ):
            table = await create_table(api)
            direct = [watch_feed(api, table.match_id, batched=True) for _ in range(CAP)]
            for feed in direct:
                await feed.snapshot()
            assert (await refusal(watch_feed(api, table.match_id, batched=True))).code() == (
                grpc.StatusCode.RESOURCE_EXHAUSTED
            )
            # The gateway's calls come from this same host, but count as the browser's
            # ("web:127.0.0.1"), not the direct client's: a message, not a refusal.
            watch = spb.WatchMatchRequest(match_id=table.match_id).SerializeToString()
            flags = await asyncio.to_thread(first_frame_flags, server.web_port, watch)
            assert flags == 0
            for feed in direct:
                feed.cancel()

    run(scenario())
