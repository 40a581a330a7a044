"""Undecodable requests are the client's INVALID_ARGUMENT, quietly logged (issue 10, defect 8);
oversized ones are refused at the transport (defect 6, for the gRPC port).

Before the fix bytes that were not a valid message answered UNKNOWN with the Python exception
in the details, and on Play each one wrote an ERROR line with a traceback (163 lines from one
fuzz run). Now they are INVALID_ARGUMENT "request is not a valid cardarena.v1.<Type>
message", logged at warning level at most once a second per peer.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.server.api.status import MESSAGE_MAX
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import SERVICE, auth, run
from ..serverproc import ServerProcess, log_records
from .support import channel_to, create_table, raw_unary, rss_kib, settled_rss_kib

METHODS = spb.DESCRIPTOR.services_by_name["MatchService"].methods
GARBAGE = (b"\xff", b"\x0a\x05ab", b"\x08" + b"\xff" * 11, b"\x12\x80")
"""Bytes no message decodes: a cut tag, a length past the end, a varint of 11 bytes, a cut
length."""


def expected(method: Any) -> str:
    return f"request is not a valid {method.input_type.full_name} message"


async def undecodable_call(
    channel: grpc.aio.Channel, method: Any, payload: bytes, metadata: Any = ()
) -> tuple[grpc.StatusCode, str]:
    """Send ``payload`` as the request of ``method`` (for Play, as its first message)."""
    path = f"/{SERVICE}/{method.name}"
    if not method.client_streaming and not method.server_streaming:
        code, details, _ = await raw_unary(channel, method.name, payload, metadata=metadata)
        return code, details
    if method.client_streaming:
        bidi: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(path)
        call: Any = bidi(metadata=metadata, timeout=RPC)
        await call.write(payload)
        await call.done_writing()
    else:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(path)
        call = stream(payload, metadata=metadata, timeout=RPC)
    try:
        while await call.read() is not grpc.aio.EOF:
            pass
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    return grpc.StatusCode.OK, ""


def test_undecodable_requests_are_invalid_argument_on_every_rpc_and_logged_sparingly(
    data_dir: Path,
) -> None:
    async def scenario(address: str) -> float:
        started = time.monotonic()
        async with channel_to(address) as (channel, api):
            for method in METHODS:
                for payload in GARBAGE:
                    code, details = await undecodable_call(channel, method, payload)
                    assert (code, details) == (
                        grpc.StatusCode.INVALID_ARGUMENT,
                        expected(method),
                    ), (
                        method.name,
                        payload,
                    )
            # Play: a valid opening, then bytes that are no PlayRequest.
            table = await create_table(api)
            bidi: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(
                f"/{SERVICE}/Play"
            )
            call: Any = bidi(metadata=auth(table.tokens[0]), timeout=RPC)
            opening = spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=0))
            await call.write(opening.SerializeToString())
            await call.write(b"\x12\x80")
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while await call.read() is not grpc.aio.EOF:
                    pass
            assert ended.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert (
                ended.value.details() == "request is not a valid cardarena.v1.PlayRequest message"
            )

            # A burst of 200 over every RPC: each answered, the log barely notices.
            burst = [
                undecodable_call(channel, METHODS[i % len(METHODS)], GARBAGE[i % len(GARBAGE)])
                for i in range(200)
            ]
            for batch in range(0, len(burst), 20):
                answers = await asyncio.gather(*burst[batch : batch + 20])
                assert {code for code, _ in answers} == {grpc.StatusCode.INVALID_ARGUMENT}
            return time.monotonic() - started

    with ServerProcess(data_dir) as server:
        seconds = run(scenario(server.address), 60)
        assert server.terminate() == 0
    text = server.stderr_path.read_text()
    records = log_records(server.stderr_path)  # every line is JSON
    warned = [r for r in records if r["event"] == "undecodable_request"]
    assert warned and all(r["level"] == "warning" for r in warned)
    # One a second at most, over the whole run (the first pass and the burst).
    assert len(warned) <= int(seconds) + 2, (len(warned), seconds)
    assert not [r for r in records if r["level"] in ("error", "critical")]
    assert "Traceback" not in text and "DecodeError" not in text


def test_oversized_requests_are_refused_without_being_buffered(data_dir: Path) -> None:
    """Sixteen concurrent 4 MiB requests: each RESOURCE_EXHAUSTED, the server barely grows."""

    async def scenario(address: str, pid: int) -> int:
        async with channel_to(address, [("grpc.max_send_message_length", 8 << 20)]) as (
            channel,
            _,
        ):
            before = rss_kib(pid)
            payload = b"\x0a" + b"\x80\x80\x80\x02" + b"x" * (4 << 20)  # game: a 4 MiB string
            answers = await asyncio.gather(
                *(raw_unary(channel, "CreateMatch", payload) for _ in range(16))
            )
            assert {code for code, _, _ in answers} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
            return await settled_rss_kib(pid) - before

    with ServerProcess(data_dir) as server:
        assert server.process is not None
        growth = run(scenario(server.address, server.process.pid), 30)
    assert growth < 60 * 1024, f"the server grew by {growth} KiB"


def test_an_unknown_id_of_any_length_is_not_found_with_a_bounded_message(data_dir: Path) -> None:
    """A refusal may quote the id it could not find; a client chooses that id's length. Once
    the message echoed it whole: 1,011 characters for a 1,000-character id, and past 16 KiB
    of metadata the client got RESOURCE_EXHAUSTED instead of NOT_FOUND."""

    async def scenario(address: str) -> list[tuple[grpc.StatusCode, int]]:
        answers = []
        async with channel_to(address) as (_, api):
            for length in (10, 1_000, 20_000, 200_000):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await api.GetMatch(spb.GetMatchRequest(match_id="m" * length), timeout=RPC)
                answers.append((refused.value.code(), len(refused.value.details() or "")))
        return answers

    with ServerProcess(data_dir) as server:
        answers = run(scenario(server.address), 60)
        assert server.terminate() == 0
    assert all(code == grpc.StatusCode.NOT_FOUND for code, _ in answers), answers
    assert all(0 < size <= MESSAGE_MAX for _, size in answers), answers
