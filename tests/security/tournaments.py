"""What the tournament security tests share: the TournamentService's stub on an in-process
server, a valid CreateTournamentRequest to spoil one field at a time, entrants' streams read
message by message (or as raw bytes), and calls that must fail, by their status.

Every read is bounded (``RPC``); nothing sleeps to synchronise.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from google.protobuf import struct_pb2

from cardarena.server.app import Server
from cardarena.server.tournaments import Director
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1 import tournament_pb2_grpc

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, read_to_end, run
from ..waiting import eventually
from .support import address_of, channel_to, secret, served

if TYPE_CHECKING:
    from pathlib import Path

    from cardarena.server.api import Access
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

T = TypeVar("T")

TSERVICE = "cardarena.v1.TournamentService"
TMETHODS = tuple(tpb.DESCRIPTOR.services_by_name["TournamentService"].methods)
LONG_MOVE = 3_600_000
"""A move time nobody reaches in a test: no seat times out unless the test wants it to."""


def tstub(channel: grpc.aio.Channel) -> TournamentServiceAsyncStub:
    return tournament_pb2_grpc.TournamentServiceStub(channel)


@contextlib.asynccontextmanager
async def apis(
    server: Server, options: Sequence[tuple[str, Any]] = ()
) -> AsyncIterator[tuple[grpc.aio.Channel, MatchServiceAsyncStub, TournamentServiceAsyncStub]]:
    async with channel_to(address_of(server), options) as (channel, api):
        yield channel, api, tstub(channel)


def with_tournaments(
    data_dir: Path,
    scenario: Callable[[Server, TournamentServiceAsyncStub, MatchServiceAsyncStub], Awaitable[T]],
    seconds: float = 30.0,
    *,
    access: Access | None = None,
) -> T:
    """:func:`run` ``scenario`` against a server of its own in ``data_dir`` (``served``,
    with ``access``), given the server and stubs of both services on one channel to it: the
    frame of a test of the tournament API."""

    async def framed() -> T:
        async with served(data_dir, access=access) as server, apis(server) as (_, api, tapi):
            return await scenario(server, tapi, api)

    return run(framed(), seconds)


Scenario = Callable[
    [Server, "TournamentServiceAsyncStub", "MatchServiceAsyncStub"], Awaitable[None]
]


def tournament_test(
    seconds: float = 30.0, *, access: Access | None = None
) -> Callable[[Scenario], Callable[[Path], None]]:
    """The test that is ``scenario`` alone: run by :func:`with_tournaments` (``seconds``,
    ``access``) in the test's ``data_dir``, under the scenario's name and docstring.

    So an ``async def test_…`` decorated with it is collected as a plain test taking
    ``data_dir``, whose failures trace through this helper into the scenario; pytest's marks
    go above the decorator, on the test it makes."""

    def test(scenario: Scenario) -> Callable[[Path], None]:
        def framed(data_dir: Path) -> None:
            with_tournaments(data_dir, scenario, seconds, access=access)

        framed.__name__ = framed.__qualname__ = getattr(scenario, "__name__", "scenario")
        framed.__doc__ = scenario.__doc__
        return framed

    return test


def create_request(
    names: Sequence[str] = ("a", "b", "c"),
    *,
    keys: Sequence[str] | None = None,
    game: str = "triathlon",
    options: dict[str, Any] | None = None,
    deals: int = 1,
    concurrency: int = 3,
    move_ms: int = LONG_MOVE,
    creator_secret: str = "",
    fallback: bool = True,
    entry_ms: int = 1,
    **fields: Any,
) -> tpb.CreateTournamentRequest:
    """A valid request (a one-deal Triathlon of three entrants by default, no time-outs, the
    fallback policy so that nothing forfeits by itself, and the first match at once rather
    than after waiting for entrants to enter); ``keys`` given or drawn ("")."""
    struct = struct_pb2.Struct()
    struct.update({"max_deals": 1} if options is None and game == "triathlon" else options or {})
    keys = [secret() for _ in names] if keys is None else keys
    request = tpb.CreateTournamentRequest(
        game=game,
        options=struct,
        time_control=spb.TimeControl(move_ms=move_ms),
        entrants=[tpb.EntrantSpec(name=n, key=k) for n, k in zip(names, keys, strict=True)],
        deals=deals,
        concurrency=concurrency,
        creator_secret=creator_secret,
        entry_ms=entry_ms,
        **fields,
    )
    if fallback:
        request.fault_policy.fallback = True
    return request


@dataclass
class Hosted:
    """A tournament created here: its id, every entrant's key, its creator secret."""

    tournament_id: str
    keys: list[str]
    creator: str
    info: tpb.TournamentInfo


async def host(
    tapi: TournamentServiceAsyncStub,
    names: Sequence[str] = ("a", "b", "c"),
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    **kwargs: Any,
) -> Hosted:
    """Create a tournament (with a creator secret, keys chosen here unless ``keys``)."""
    creator = kwargs.pop("creator_secret", None)
    creator = secret() if creator is None else creator  # "": none
    request = create_request(names, creator_secret=creator, **kwargs)
    created = await tapi.CreateTournament(request, metadata=metadata, timeout=RPC)
    keys = [e.key or drawn for e, drawn in zip(request.entrants, created.entrant_keys, strict=True)]
    return Hosted(created.tournament.tournament_id, keys, creator, created.tournament)


async def stream_failure(call: Any) -> grpc.aio.AioRpcError:
    """The error of a stream that must fail (read to its end, each read bounded)."""
    try:
        while await asyncio.wait_for(call.read(), RPC) is not grpc.aio.EOF:
            pass
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the stream ended normally")


async def watched(call: Any) -> list[tpb.TournamentInfo]:
    """The tournament states a WatchTournament ``call`` carries from here to its end."""
    return [message.tournament for message in await read_to_end(call)]


@dataclass
class Entry:
    """One Enter stream, read message by message."""

    call: grpc.aio.UnaryStreamCall[tpb.EnterRequest, tpb.EnterResponse]
    entered: tpb.Entered | None = None
    matches: list[tpb.MatchAssigned] = field(default_factory=list)
    ended: tpb.TournamentInfo | None = None

    async def read(self, seconds: float = RPC) -> tpb.EnterResponse | None:
        """The next message (recorded), or ``None`` at the stream's normal end."""
        message = await asyncio.wait_for(self.call.read(), seconds)
        if not isinstance(message, tpb.EnterResponse):
            return None
        kind = message.WhichOneof("kind")
        if kind == "entered":
            self.entered = message.entered
        elif kind == "match":
            self.matches.append(message.match)
        elif kind == "ended":
            self.ended = message.ended
        return message

    def seats(self) -> list[tpb.MatchAssigned]:
        """Each seat told of, once (a seat being seated as the entrant connects may be told
        twice: a client plays a match once)."""
        seen: dict[tuple[str, int], tpb.MatchAssigned] = {}
        for assigned in self.matches:
            seen.setdefault((assigned.match_id, assigned.seat), assigned)
        return list(seen.values())

    async def until_matches(self, count: int) -> list[tpb.MatchAssigned]:
        """Read until ``count`` distinct seats were told of: those seats."""
        while len(self.seats()) < count:
            if await self.read() is None:
                raise AssertionError(f"the stream ended after {len(self.matches)} matches")
        return self.seats()

    async def rest(self) -> None:
        while await self.read() is not None:
            pass

    def cancel(self) -> None:
        self.call.cancel()


def enter(
    tapi: TournamentServiceAsyncStub, tournament_id: str, key: str, contribution: bytes = b""
) -> Entry:
    request = tpb.EnterRequest(tournament_id=tournament_id, contribution=contribution)
    return Entry(tapi.Enter(request, metadata=auth(key), timeout=60))


def director_of(server: Server, tournament_id: str) -> Director:
    return server.tournaments.directors[tournament_id]


async def settled(server: Server, tournament_id: str) -> Director:
    """Wait until the director is idle: as many matches running as it may run (or every one
    started), each seated. (A cancellation while it is still starting one is
    ``test_tournament_secrets``'s.)"""
    director = director_of(server, tournament_id)

    def idle() -> bool:
        full = len(director.running) >= director.spec.concurrency
        return (full or director.next_index >= len(director.plans)) and all(
            seat.token_hash is not None
            for index in director.running
            for seat in server.arena.matches[director.match_ids[index]].seats
        )

    await eventually(idle, what=f"the director of {tournament_id} idle")
    return director


async def end_oldest(server: Server, director: Director) -> None:
    """End the tournament's oldest running match (as its players would, by leaving: cancelled
    in-process) and wait until the director has collected it (it then starts the next)."""
    oldest = min(director.running)
    await server.arena.matches[director.match_ids[oldest]].cancel("its players left")
    await eventually(lambda: oldest not in director.running, what=f"match {oldest} collected")


async def raw_stream(
    channel: grpc.aio.Channel,
    path: str,
    request: bytes,
    sink: list[bytes],
    *,
    metadata: tuple[tuple[str, str], ...] = (),
) -> grpc.StatusCode:
    """Read a server stream's messages as the bytes on the wire into ``sink``, until it ends
    (or the caller cancels this task): its status."""
    stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(path)
    call = stream(request, metadata=metadata, timeout=60)
    try:
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:
                return grpc.StatusCode.OK
            assert isinstance(message, bytes)
            sink.append(message)
    except grpc.aio.AioRpcError as error:
        return error.code()
    finally:
        call.cancel()
