"""What the security tests share: an in-process server on 127.0.0.1:0, seated matches with
tokens chosen here, raw (undecoded) calls, and the server process's memory.

In-process servers (``served``) run on the test's own event loop: they start in a fraction
of the time a subprocess takes, and the test can look inside (``server.arena``). A test that
reads the server's log or its memory uses ``tests.serverproc.ServerProcess`` instead. The
bounded runner, ``auth`` and the deadlines are ``tests.calls``'s. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from cardarena.server.api.limits import TrustedProxies
from cardarena.server.api.reads import ReadGate
from cardarena.server.app import ServeConfig, Server
from cardarena.server.hosting import HostedMatch
from cardarena.v1 import codec, service_pb2_grpc
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import SERVICE, auth
from ..waiting import eventually

if TYPE_CHECKING:
    from cardarena.server.api import Access
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub


@contextlib.contextmanager
def fast_dir(fallback: Path) -> Iterator[Path]:
    """A data directory in memory (/dev/shm) where there is one, else ``fallback``: the store
    syncs every write to disk, which would make the long matches here take seconds, not the
    hostile clients they serve."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield fallback
        return
    path = Path(tempfile.mkdtemp(prefix="cardarena-security-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def secret() -> str:
    """A fresh client-chosen secret (token, join secret or creator secret): 43 characters."""
    return secrets.token_urlsafe(32)


@contextlib.asynccontextmanager
async def served(
    data_dir: Path,
    *,
    access: Access | None = None,
    waiting_expiry: float = 0.0,
    idle_expiry: float = 0.0,
    store: str | None = None,
    watch_streams: int = 0,
    web: str | None = None,
    trusted_proxies: str = "",
    reconnect_grace: float | None = None,
) -> AsyncIterator[Server]:
    """A server on 127.0.0.1:0 in this event loop, drained on the way out. (The settings
    the hardening added are passed only when given, so that the same scenarios can be run
    against the code from before it to see them fail.)"""
    settings: dict[str, Any] = {}
    if access is not None:
        settings["access"] = access
    if waiting_expiry:
        settings["waiting_expiry_seconds"] = waiting_expiry
    if idle_expiry:
        settings["idle_expiry_seconds"] = idle_expiry
    if store is not None:  # a replica, on a shared store
        settings["store"] = store
    if watch_streams:
        settings["watch_streams"] = watch_streams
    if web is not None:  # the gRPC-Web gateway (no web app: its calls only)
        settings["web"] = web
    if trusted_proxies:
        settings["trusted_proxies"] = TrustedProxies.parse(trusted_proxies)
    if reconnect_grace is not None:
        settings["reconnect_grace_seconds"] = reconnect_grace
    server = Server(
        ServeConfig(
            listen="127.0.0.1:0",
            data_dir=data_dir,
            metrics_port=-1,
            drain_seconds=0.5,
            **settings,
        )
    )
    await server.start()
    try:
        yield server
    finally:
        await server.drain()


@contextlib.asynccontextmanager
async def channel_to(
    address: str, options: Sequence[tuple[str, Any]] = ()
) -> AsyncIterator[tuple[grpc.aio.Channel, MatchServiceAsyncStub]]:
    async with grpc.aio.insecure_channel(address, options=list(options)) as channel:
        yield channel, service_pb2_grpc.MatchServiceStub(channel)


def address_of(server: Server) -> str:
    return f"127.0.0.1:{server.port}"


@dataclass
class Table:
    """A created match and the tokens of the seats taken so far."""

    match_id: str
    players: int
    tokens: list[str] = field(default_factory=list)
    seed: bytes = b""


async def create_table(
    api: MatchServiceAsyncStub,
    game: str = "triathlon",
    players: int = 3,
    *,
    options: dict[str, Any] | None = None,
    seed: bytes | None = None,
    seat_all: bool = True,
    metadata: tuple[tuple[str, str], ...] = (),
    reserved: dict[int, str] | None = None,
    creator_secret: str = "",
    move_ms: int = 0,
) -> Table:
    """Create a match (a one-deal Triathlon by default) and take every seat unless not
    ``seat_all``; each seat's token is chosen here."""
    if options is None:
        options = {"max_deals": 1} if game == "triathlon" else {}
    seed = secrets.token_bytes(32) if seed is None else seed
    request = spb.CreateMatchRequest(
        game=game,
        players=players,
        options=codec.struct_of(options),
        seed=seed,
        time_control=spb.TimeControl(move_ms=move_ms),
    )
    for seat, join_secret in (reserved or {}).items():
        request.reserved_seats.add(seat=seat, join_secret=join_secret)
    if creator_secret:
        request.creator_secret = creator_secret
    created = await api.CreateMatch(request, metadata=metadata, timeout=RPC)
    table = Table(created.match.match_id, created.match.players, seed=seed)
    if seat_all:
        for seat in range(table.players):
            token = secret()
            join = spb.JoinMatchRequest(
                match_id=table.match_id, seat=seat, name=f"bot{seat}", token=token
            )
            if seat in (reserved or {}):
                join.join_secret = (reserved or {})[seat]
            joined = await api.JoinMatch(join, timeout=RPC)
            assert joined.seat == seat
            table.tokens.append(token)
    return table


def hosted_turn(server: Server, match_id: str) -> tuple[int, int, list[int]]:
    """``(seat, seq, legal action ids)`` read from the in-process server's memory."""
    hosted: HostedMatch = server.arena.matches[match_id]
    seat = hosted.engine.to_act
    assert seat is not None, "nobody is to act"
    return seat, hosted.last_seq, list(hosted.engine.legal_actions())


async def play_hosted_to_end(
    server: Server, api: MatchServiceAsyncStub, table: Table, *, max_actions: int = 5000
) -> int:
    """Play the lowest legal action of whoever is to act, over SubmitAction, reading whose
    turn it is from the in-process server; return the actions played."""
    hosted = server.arena.matches[table.match_id]
    for count in range(max_actions):
        if hosted.ended:
            return count
        await play_lowest(server, api, table)
    raise AssertionError(f"match {table.match_id} did not end in {max_actions} actions")


async def play_lowest(server: Server, api: MatchServiceAsyncStub, table: Table) -> None:
    """The lowest legal action of whoever is to act, over SubmitAction."""
    seat, seq, legal = hosted_turn(server, table.match_id)
    await api.SubmitAction(
        spb.SubmitActionRequest(
            match_id=table.match_id,
            seat=seat,
            action=codec.action_to_pb(legal[0]),
            expected_seq=seq,
            request_id=secrets.token_hex(8),
        ),
        metadata=auth(table.tokens[seat]),
        timeout=RPC,
    )


async def failure(call: Awaitable[object]) -> grpc.aio.AioRpcError:
    """The error of a unary call that must fail."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the call succeeded")


async def code_of(call: Awaitable[object]) -> grpc.StatusCode:
    """The status code of a unary call that must fail."""
    return (await failure(call)).code()


async def raw_unary(
    channel: grpc.aio.Channel,
    method: str,
    payload: bytes,
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    timeout: float = RPC,
    service: str = SERVICE,
) -> tuple[grpc.StatusCode, str, bytes]:
    """Call ``method`` (of ``service``) with ``payload`` as the request's bytes: ``(code,
    details, reply)``."""
    call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        f"/{service}/{method}"
    )
    try:
        reply = await call(payload, metadata=metadata, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or "", b""
    assert isinstance(reply, bytes)
    return grpc.StatusCode.OK, "", reply


def rss_kib(pid: int) -> int:
    """The resident set size of process ``pid``, in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


async def settled_rss_kib(pid: int) -> int:
    """:func:`rss_kib` once it has stopped changing (the same in three readings a tenth of
    a second apart): what a burst of calls left behind, read when the process is done with
    them rather than after a guessed while."""
    readings: list[int] = []

    def steady() -> int | None:
        readings.append(rss_kib(pid))
        last = readings[-3:]
        return last[0] if len(last) == 3 and len(set(last)) == 1 else None

    return await eventually(steady, every=0.1, what=f"the memory of process {pid} to settle")


async def play_seat(
    address: str, table: Table, seat: int
) -> tuple[list[str], list[spb.ActionResult]]:
    """Play one seat over Play with its lowest legal action on every prompt, until the
    stream ends: the request ids sent, and the results received, in order."""
    outgoing: asyncio.Queue[spb.PlayRequest | None] = asyncio.Queue()
    outgoing.put_nowait(spb.PlayRequest(open=spb.PlayOpen(match_id=table.match_id, seat=seat)))

    async def requests() -> AsyncIterator[spb.PlayRequest]:
        while (request := await outgoing.get()) is not None:
            yield request

    sent: list[str] = []
    results: list[spb.ActionResult] = []
    async with channel_to(address) as (_, api):
        call = api.Play(requests(), metadata=auth(table.tokens[seat]), timeout=60)
        try:
            async for response in call:
                kind = response.WhichOneof("kind")
                if kind == "result":
                    results.append(response.result)
                    continue
                if kind == "your_turn":
                    seq, legal = response.your_turn.seq, response.your_turn.legal_actions
                elif kind == "snapshot" and response.snapshot.legal_actions:
                    seq, legal = response.snapshot.seq, response.snapshot.legal_actions
                else:
                    continue
                request_id = secrets.token_hex(8)
                sent.append(request_id)
                outgoing.put_nowait(
                    spb.PlayRequest(
                        act=spb.PlayAction(action=legal[0], expected_seq=seq, request_id=request_id)
                    )
                )
        finally:
            outgoing.put_nowait(None)
        assert await call.code() == grpc.StatusCode.OK
    return sent, results


async def play_out_over_play(address: str, table: Table) -> None:
    """Play every seat of ``table`` over Play until the match ends."""
    await asyncio.gather(*(play_seat(address, table, s) for s in range(table.players)))


QUICK = 5.0
"""A read that is served must be served within this (the scenarios hold nothing else)."""


@contextlib.asynccontextmanager
async def gate_held(server: Server) -> AsyncIterator[ReadGate]:
    """The read gate held by someone else's read until the block ends (a test that checks
    who waits at it, and who does not)."""
    gate = server.service.guard.reads
    held, done = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with gate.turn("someone else"):
            held.set()
            await done.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait_for(held.wait(), QUICK)
    try:
        yield gate
    finally:
        done.set()
        await asyncio.wait_for(task, QUICK)


async def whole(gate: ReadGate) -> None:
    """Wait until the gate is free, nothing waits, and no address has a queue."""

    def free() -> bool | None:
        return (not gate._running and gate.waiting == 0 and not gate._queues) or None

    await eventually(free, what="the read gate to be free and empty")
