"""Server load benchmark: many concurrent 4-player matches against a real ``cardarena serve``.

Why: the issue's target is 1,000 concurrent matches on one server process, with durable logging
on, at no less than 60% of what gRPC itself can carry. This script gives both numbers from one
run: the real server (fresh temporary data dir, SQLite store, ``synchronous=FULL``) and a
*no-op ceiling*, a grpc.aio servicer written here that answers the same RPCs instantly from
memory (no store, no engine, no checks), each driven by the identical client code at the same
concurrency. It is a benchmark run on purpose, not a test: it asserts nothing about speed.

Both servers run in their own process (the no-op one is this script with ``--noop-server``),
on 127.0.0.1 only; the load comes from ``--client-procs`` other processes. Everything stops
by itself: setup is bounded by ``--setup-timeout``, play by ``--seconds``.

How the bots play. Each match slot creates a match, joins its four seats, and each seat then
keeps ONE ``StreamEvents`` stream open for the whole match and acts on what it receives; no
stream is reopened and nothing is polled. ``--pattern`` says how a seat knows its turn:

* ``turns`` (the default): the stream's ``YourTurn`` prompt (or the first snapshot's
  ``to_act``/``legal_actions``) gives the seq and the legal actions; the seat submits a random
  one with that seq as ``expected_seq`` and stops at ``MatchEnded``. This is what a real bot does.
* ``replica``: for servers without ``YourTurn``. The bench chooses every match's seed
  (``CreateMatchRequest.seed``), so each seat keeps a client-side engine replica dealt the same
  cards: the first event above the replica's seq is the next action (CardPlayed, Passed,
  SuitExcluded, TrumpChosen); applying it yields the events the server derived from it, so the
  seat knows the batch's last seq, whose turn it is and its legal actions. The first snapshot is
  checked against the replica and every action is validated by it (``client DIVERGED`` errors).
* ``resnapshot``: as ``replica`` for *when*, but before every action the seat cancels its stream
  and reopens it with ``after_seq`` = its last seq, and plays a random choice among the fresh
  snapshot's ``legal_actions``: the cost of a snapshot per action.

The no-op server answers each SubmitAction with the action's event on every stream of the
match and a ``YourTurn`` (six canned legal actions) to the next seat round the table; with
``turns`` it ends each match with ``MatchEnded`` after as many actions as an average match of
the game takes (measured with the engine at start-up), so matches turn over as with the real
server. Its snapshots and prompts are canned, so the replica patterns do not check them.

Reported, per server: player actions/s (successful SubmitAction calls in the window),
client-measured SubmitAction latency p50/p99, stream messages per action, matches completed
(slots start a new match when theirs ends, so the concurrency stays at ``--matches``), errors
by RPC and status code, server CPU per action (all its threads, from ``/proc``), and the server's
VmRSS before and after the matches are created and joined, and once every stream is open (per
hosted match). The machine is shared, so besides the actions/s ratio the report gives the ratio
of server CPU per action, which other load on the machine disturbs less.

Replicas (``--replicas 1,2,3``): the cost of sharing one PostgreSQL. One run measures, with the
same clients at the same concurrency, the SQLite single process, the no-op ceiling (cheap, and
it shows what the clients and gRPC alone cost on this machine), then for each N a set of N
``cardarena serve --store postgresql://...?schema=bench_<random>`` replicas on 127.0.0.1:0, each
set on a fresh schema that is dropped (``DROP SCHEMA ... CASCADE``) when its run ends, also when
the run is interrupted (Ctrl-C, SIGTERM). Clients reach replicas at random, as behind one
load-balanced address: a match is created on a random replica (which then owns it) and each seat
joins, streams and submits through a random one, so with N replicas about (N-1)/N of the actions
are forwarded to the owner. The table gives actions/s, SubmitAction p50/p99, server CPU per
action summed over the replica processes, the CPU of PostgreSQL's own processes per action
(from ``/proc``: the database runs on this machine), the forwarded fraction and group commits
per action (from each replica's Prometheus metrics), table reads per action in the run's schema
(``pg_stat_user_tables``), errors, and the ratios to the SQLite process. If PostgreSQL does not answer, the script says so and exits with status 2.

How to run (from the repository root)::

    .venv/bin/python scripts/bench_server.py                        # 200 matches, about 60 s
    .venv/bin/python scripts/bench_server.py --matches 1000 --seconds 60
    .venv/bin/python scripts/bench_server.py --repeats 3 --seconds 90   # medians of 3 runs each
    .venv/bin/python scripts/bench_server.py --pattern resnapshot --seconds 30
    .venv/bin/python scripts/bench_server.py --client-procs 2 --channels 8
    .venv/bin/python scripts/bench_server.py --py-spy /tmp/server.svg   # needs py-spy on PATH
    .venv/bin/python scripts/bench_server.py --replicas 1,2,3 --matches 100 --seconds 120
    .venv/bin/python scripts/bench_server.py --replicas 1,2,3 --repeats 3 --seconds 450 \
        --store-url postgresql://postgres@127.0.0.1:5432/test       # the default database

``--seconds`` is the total play time, split evenly over the 2 x ``--repeats`` server runs
(with ``--replicas 1,2,3``: the 5 configurations x ``--repeats``); setup (creating, joining,
opening streams) and shutdown come on top of it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import json
import math
import multiprocessing
import os
import random
import secrets
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import grpc
import psycopg
from psycopg import sql

from cardarena.engine import GAMES, PASS, Match
from cardarena.engine.actions import CHOOSE_TRUMP, EXCLUDE
from cardarena.engine.cards import french
from cardarena.engine.match import MatchSetup, setup
from cardarena.server.app import GRPC_OPTIONS
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc
from cardarena.v1.codec import action_from_pb, action_to_pb, card_from_pb

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

Kind = Literal["durable", "noop", "postgres"]
Pattern = Literal["turns", "replica", "resnapshot"]

LOOPBACK = "127.0.0.1"
CARDARENA = Path(sys.executable).parent / "cardarena"
UNARY_TIMEOUT = 30.0
SERVER_START_TIMEOUT = 30.0
TARGET_RATIO = 0.60
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
DEFAULT_STORE_URL = "postgresql://postgres@127.0.0.1:5432/test"


# --- the no-op ceiling ------------------------------------------------------------------------

Prompt = pb.Event | pb.YourTurn | None


class NoopTable:
    """What the no-op server keeps per match: a seq, whose turn it is, the open streams."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.seq = 0
        self.joined = 0
        self.actions = 0
        self.to_act = 0
        self.queues: dict[int, set[asyncio.Queue[Prompt]]] = {s: set() for s in range(players)}

    def push(self, item: Prompt, seat: int | None = None) -> None:
        for s, queues in self.queues.items():
            if seat is None or s == seat:
                for queue in queues:
                    queue.put_nowait(item)

    def open_streams(self) -> int:
        return sum(len(q) for q in self.queues.values())


def event_of_action(seat: int, action: pb.Action, seq: int) -> pb.Event:
    """The log entry an action would make, built without an engine (no rules, no checks)."""
    event = pb.Event(seq=seq)
    kind = action.WhichOneof("kind")
    if kind == "play":
        event.card_played.seat = seat
        event.card_played.card.CopyFrom(action.play)
    elif kind == "exclude_suit":
        event.suit_excluded.seat = seat
        event.suit_excluded.suit = action.exclude_suit
    elif kind == "choose_trump":
        event.trump_chosen.seat = seat
        event.trump_chosen.suit = action.choose_trump
    else:
        event.passed.seat = seat
        event.passed.reason = pb.PASS_REASON_CHOSEN
    return event


# What the no-op server offers as legal: six clubs, about what a hexathlon seat is offered.
CANNED_LEGAL = [action_to_pb(french(0, rank)) for rank in range(2, 8)]


class NoopService(service_pb2_grpc.MatchServiceServicer):
    """The RPCs the load uses, answered instantly from memory: the ceiling of gRPC itself.

    SubmitAction trusts the client: the action becomes the event at ``expected_seq + 1``, sent
    to every open stream of the match, followed by a YourTurn (six canned legal actions) to the
    next seat round the table, as the real server sends; after ``match_actions`` actions (0:
    never) a MatchEnded event ends the match and its streams. No store, no engine, no token or
    turn check.
    """

    def __init__(self, match_actions: int) -> None:
        self.tables: dict[str, NoopTable] = {}
        self.created = 0
        self.match_actions = match_actions

    async def ListGames(  # noqa: N802 - the protocol's name
        self, request: spb.ListGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.ListGamesResponse:
        return spb.ListGamesResponse()

    async def CreateMatch(  # noqa: N802 - the protocol's name
        self, request: spb.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.CreateMatchResponse:
        self.created += 1
        match_id = f"noop{self.created:08x}"
        players = request.players or 4
        self.tables[match_id] = NoopTable(players)
        return spb.CreateMatchResponse(
            match=spb.MatchInfo(
                match_id=match_id,
                game=request.game,
                players=players,
                status=spb.MATCH_STATUS_WAITING,
            )
        )

    async def GetMatch(  # noqa: N802 - the protocol's name
        self, request: spb.GetMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.GetMatchResponse:
        return spb.GetMatchResponse(match=spb.MatchInfo(match_id=request.match_id))

    async def ListMatches(  # noqa: N802 - the protocol's name
        self, request: spb.ListMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.ListMatchesResponse:
        return spb.ListMatchesResponse()

    async def JoinMatch(  # noqa: N802 - the protocol's name
        self, request: spb.JoinMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.JoinMatchResponse:
        table = self.tables.get(request.match_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such match")
        table.joined += 1
        seat = request.seat if request.HasField("seat") else table.joined - 1
        return spb.JoinMatchResponse(
            seat=seat,
            token=f"{request.match_id}-{seat}",
            match=spb.MatchInfo(match_id=request.match_id, last_seq=table.seq),
        )

    async def SubmitAction(  # noqa: N802 - the protocol's name
        self, request: spb.SubmitActionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.SubmitActionResponse:
        table = self.tables.get(request.match_id)
        seq = request.expected_seq + 1
        event = event_of_action(request.seat, request.action, seq)
        if table is not None:
            table.seq = seq
            table.actions += 1
            table.push(event)
            if self.match_actions and table.actions >= self.match_actions:
                table.seq += 1
                table.push(pb.Event(seq=table.seq, match_ended=pb.MatchEnded()))
                table.push(None)
            else:
                table.to_act = (request.seat + 1) % table.players
                table.push(pb.YourTurn(seq=seq, legal_actions=CANNED_LEGAL), table.to_act)
        return spb.SubmitActionResponse(first_seq=seq, last_seq=seq, events=[event])

    async def StreamEvents(  # noqa: N802 - the protocol's name
        self, request: spb.StreamEventsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[spb.StreamEventsResponse]:
        table = self.tables.get(request.match_id)
        if table is None or request.seat not in table.queues:
            context.set_code(grpc.StatusCode.NOT_FOUND)
            context.set_details("no such match or seat")
            return
        queue: asyncio.Queue[Prompt] = asyncio.Queue()
        table.queues[request.seat].add(queue)
        try:
            snapshot = pb.Snapshot(
                match_id=request.match_id,
                players=table.players,
                viewer_seat=request.seat,
                seq=table.seq,
                to_act=table.to_act,
            )
            if request.seat == table.to_act:
                snapshot.legal_actions.extend(CANNED_LEGAL)
            yield spb.StreamEventsResponse(snapshot=snapshot)
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, pb.YourTurn):
                    yield spb.StreamEventsResponse(your_turn=item)
                else:
                    yield spb.StreamEventsResponse(event=item)
        finally:
            table.queues[request.seat].discard(queue)
            if table.seq > 0 and not table.open_streams():
                self.tables.pop(request.match_id, None)  # the match is over or abandoned

    async def WatchMatch(  # noqa: N802 - the protocol's name
        self, request: spb.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[spb.WatchMatchResponse]:
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details("the no-op server has no spectators")
        for _ in ():  # an async generator that yields nothing
            yield spb.WatchMatchResponse()

    async def GetMatchLog(  # noqa: N802 - the protocol's name
        self, request: spb.GetMatchLogRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.GetMatchLogResponse:
        return spb.GetMatchLogResponse()

    async def CancelMatch(  # noqa: N802 - the protocol's name
        self, request: spb.CancelMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> spb.CancelMatchResponse:
        self.tables.pop(request.match_id, None)
        return spb.CancelMatchResponse()

    async def Play(  # noqa: N802 - the protocol's name
        self,
        request_iterator: AsyncIterator[spb.PlayRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[spb.PlayResponse]:
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        context.set_details("the benchmark drives the unary pattern; Play is not measured yet")
        for _ in ():  # an async generator that yields nothing
            yield spb.PlayResponse()


async def serve_noop(listen: str, match_actions: int) -> None:
    """Run the no-op server until SIGTERM/SIGINT; print the same first line as ``cardarena``."""
    server = grpc.aio.server(options=GRPC_OPTIONS)
    service_pb2_grpc.add_MatchServiceServicer_to_server(NoopService(match_actions), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        raise OSError(f"could not listen on {listen}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"noop listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    await stop.wait()
    await server.stop(0)


# --- the bots ---------------------------------------------------------------------------------


class Divergence(Exception):
    """The stream told something the client-side replica of the match does not accept."""


class MatchFailed(Exception):
    """An RPC of this match failed (already counted); the slot gives the match up."""


@dataclasses.dataclass(frozen=True)
class WorkerConfig:
    addresses: tuple[str, ...]  # one per server process: replicas of one store, or one server
    kind: Kind
    worker: int
    slots: int
    game: str
    players: int
    window: float
    channels: int
    setup_concurrency: int
    setup_timeout: float
    pattern: Pattern
    seed: int


@dataclasses.dataclass
class Stats:
    """What one client process saw; merged by the parent."""

    actions: int = 0
    messages: int = 0
    latencies: list[float] = dataclasses.field(default_factory=list)
    errors: Counter[str] = dataclasses.field(default_factory=Counter)
    completed: int = 0
    abandoned: int = 0
    started: int = 0
    snapshots: int = 0
    create_seconds: float = 0.0
    stream_seconds: float = 0.0
    cpu_seconds: float = 0.0
    failure: str = ""
    counting: bool = False

    def error(self, what: str, error: BaseException) -> None:
        if isinstance(error, grpc.aio.AioRpcError):
            self.errors[f"{what} {error.code().name}"] += 1
        else:
            self.errors[f"{what} {type(error).__name__}"] += 1


@dataclasses.dataclass
class Table:
    """One match as its four bots know it."""

    match_id: str
    seed: bytes
    tokens: list[str]
    join_seqs: list[int]
    api: MatchServiceAsyncStub  # where the match was created
    seat_apis: list[MatchServiceAsyncStub]  # where each seat joins, streams and submits


class SeatBot:
    """One seat: its token, its one stream, and (replica patterns) its replica of the match."""

    def __init__(
        self,
        table: Table,
        seat: int,
        replica: Match | None,
        rng: random.Random,
        config: WorkerConfig,
    ) -> None:
        self.table = table
        self.seat = seat
        self.replica = replica
        self.rng = rng
        self.pattern = config.pattern
        # The no-op server's snapshots and prompts are canned: only a real one's are checked.
        self.trusted = config.kind != "noop"
        self.api = table.seat_apis[seat]
        self.metadata = (("authorization", f"Bearer {table.tokens[seat]}"),)
        self.covered = 0  # the replica is at this seq of the server's log
        self.snapshot = pb.Snapshot()
        self.call: grpc.aio.UnaryStreamCall[spb.StreamEventsRequest, spb.StreamEventsResponse]
        self.submitted = 0

    async def open(self, after_seq: int, stats: Stats) -> pb.Snapshot:
        """(Re)open the seat's stream and return its snapshot."""
        request = spb.StreamEventsRequest(
            match_id=self.table.match_id, seat=self.seat, after_seq=after_seq
        )
        self.call = self.api.StreamEvents(request, metadata=self.metadata)
        try:
            first = await self.call.read()
        except grpc.aio.AioRpcError as error:
            stats.error("StreamEvents", error)
            raise MatchFailed from error
        if not isinstance(first, spb.StreamEventsResponse) or not first.HasField("snapshot"):
            raise Divergence("the stream did not start with a snapshot")
        stats.snapshots += 1
        self.snapshot = first.snapshot
        return first.snapshot

    def check(self, snapshot: pb.Snapshot) -> None:
        """A real server's first snapshot must agree with the replica."""
        self.covered = snapshot.seq
        if self.replica is None or not self.trusted:
            return
        if snapshot.HasField("to_act") and snapshot.to_act != self.replica.to_act:
            raise Divergence(f"to_act {snapshot.to_act} != replica {self.replica.to_act}")
        legal = [action_from_pb(a) for a in snapshot.legal_actions]
        if legal and legal != self.replica.legal_actions():
            raise Divergence("the snapshot's legal actions differ from the replica's")

    def cancel(self) -> None:
        with contextlib.suppress(AttributeError):
            self.call.cancel()

    async def read(self, stats: Stats) -> spb.StreamEventsResponse | None:
        """The next message, or ``None`` when the server ended the stream."""
        try:
            message = await self.call.read()
        except grpc.aio.AioRpcError as error:
            stats.error("StreamEvents", error)
            raise MatchFailed from error
        if not isinstance(message, spb.StreamEventsResponse):
            return None
        if stats.counting and not message.HasField("snapshot"):
            stats.messages += 1
        return message

    async def play(self, stats: Stats) -> None:
        if self.pattern == "turns":
            await self.play_turns(stats)
        else:
            await self.play_replica(stats)

    async def play_turns(self, stats: Stats) -> None:
        """Act on the snapshot and on each YourTurn with a random legal action; stop at the end."""
        snapshot = self.snapshot
        if snapshot.over:
            return
        if snapshot.HasField("to_act") and snapshot.to_act == self.seat:
            await self.submit(snapshot.seq, snapshot.legal_actions, stats)
        while True:
            message = await self.read(stats)
            if message is None:
                raise Divergence("the stream ended before MatchEnded")
            if message.HasField("your_turn"):
                await self.submit(message.your_turn.seq, message.your_turn.legal_actions, stats)
            elif message.HasField("event") and message.event.HasField("match_ended"):
                return

    async def play_replica(self, stats: Stats) -> None:
        """Fold each action into the replica; act when the replica says it is our turn."""
        replica = self.replica
        assert replica is not None
        if replica.to_act == self.seat:
            await self.act_from_replica(stats)
        while not replica.over:
            message = await self.read(stats)
            if message is None:
                raise Divergence("the stream ended before the match did")
            if not message.HasField("event"):
                continue  # a snapshot after a reopen, or a YourTurn (not needed here)
            event = message.event
            if event.seq <= self.covered:
                continue  # derived in the replica when it applied the batch's action
            if event.seq != self.covered + 1:
                raise Divergence(f"event {event.seq} after seq {self.covered}")
            seat, action = action_in(event)
            try:
                derived = replica.apply(seat, action)
            except Exception as error:
                raise Divergence(f"seq {event.seq}: {error}") from error
            self.covered = event.seq + len(derived) - 1
            if replica.to_act == self.seat:
                await self.act_from_replica(stats)

    async def act_from_replica(self, stats: Stats) -> None:
        assert self.replica is not None
        legal: list[int] = []
        if self.pattern == "resnapshot":
            self.call.cancel()
            snapshot = await self.open(self.covered, stats)
            if self.trusted:
                if snapshot.seq != self.covered:
                    raise Divergence(f"snapshot at {snapshot.seq}, replica at {self.covered}")
                legal = [action_from_pb(a) for a in snapshot.legal_actions]
        choice = self.rng.choice(legal or self.replica.legal_actions())
        await self.submit(self.covered, [action_to_pb(choice)], stats)

    async def submit(self, seq: int, legal: Sequence[pb.Action], stats: Stats) -> None:
        if not legal:
            raise Divergence(f"seat {self.seat} is to act at {seq} with no legal action")
        self.submitted += 1
        request = spb.SubmitActionRequest(
            match_id=self.table.match_id,
            seat=self.seat,
            action=self.rng.choice(legal),
            expected_seq=seq,
            request_id=f"s{self.seat}a{self.submitted}",
        )
        started = time.perf_counter()
        try:
            await self.api.SubmitAction(request, metadata=self.metadata, timeout=UNARY_TIMEOUT)
        except grpc.aio.AioRpcError as error:
            stats.error("SubmitAction", error)
            if error.code() == grpc.StatusCode.ABORTED and self.pattern == "turns":
                return  # a stale prompt: a newer YourTurn is on its way
            raise MatchFailed from error
        if stats.counting:
            stats.latencies.append(time.perf_counter() - started)
            stats.actions += 1


def action_in(event: pb.Event) -> tuple[int, int]:
    """The ``(seat, action)`` of the event that opens a batch; anything else is a divergence."""
    kind = event.WhichOneof("kind")
    if kind == "card_played":
        return event.card_played.seat, card_from_pb(event.card_played.card)
    if kind == "passed":
        return event.passed.seat, PASS
    if kind == "suit_excluded":
        return event.suit_excluded.seat, EXCLUDE + event.suit_excluded.suit - 1
    if kind == "trump_chosen":
        return event.trump_chosen.seat, CHOOSE_TRUMP + event.trump_chosen.suit - 1
    raise Divergence(f"event {event.seq} ({kind}) where the replica expects an action")


class Worker:
    """One client process: ``slots`` concurrent matches over ``channels`` connections."""

    def __init__(self, config: WorkerConfig, prepared: MatchSetup) -> None:
        self.config = config
        self.prepared = prepared
        self.stats = Stats()
        self.apis: list[list[MatchServiceAsyncStub]] = []  # per server, ``channels`` each
        self.made = 0
        # Clients reach the replicas at random, as behind one load-balanced address.
        self.spread = random.Random(f"spread/{config.seed}/{config.worker}")

    def api_for(self, slot: int) -> MatchServiceAsyncStub:
        """A stub for one call site of ``slot``: a random server, the slot's channel to it."""
        per_server = self.apis[self.spread.randrange(len(self.apis))]
        return per_server[slot % len(per_server)]

    def seed_for(self, slot: int) -> bytes:
        self.made += 1
        text = f"cardarena-bench/{self.config.seed}/{self.config.worker}/{slot}/{self.made}"
        return hashlib.sha256(text.encode()).digest()

    async def create(self, slot: int) -> Table:
        """Create a match and take every seat; the replica patterns choose the seed.

        With several servers (replicas of one store) the match is created on a random one,
        which owns it, and each seat picks a random one for its join, stream and actions.
        """
        cfg = self.config
        api = self.api_for(slot)
        seat_apis = [self.api_for(slot) for _ in range(cfg.players)]
        seed = b"" if cfg.pattern == "turns" else self.seed_for(slot)
        try:
            created = await api.CreateMatch(
                spb.CreateMatchRequest(game=cfg.game, players=cfg.players, seed=seed),
                timeout=UNARY_TIMEOUT,
            )
        except grpc.aio.AioRpcError as error:
            self.stats.error("CreateMatch", error)
            raise MatchFailed from error
        match_id = created.match.match_id

        async def join(seat: int) -> spb.JoinMatchResponse:
            request = spb.JoinMatchRequest(match_id=match_id, seat=seat, name=f"bench{seat}")
            return await seat_apis[seat].JoinMatch(request, timeout=UNARY_TIMEOUT)

        try:
            joined = await asyncio.gather(*(join(seat) for seat in range(cfg.players)))
        except grpc.aio.AioRpcError as error:
            self.stats.error("JoinMatch", error)
            raise MatchFailed from error
        return Table(
            match_id,
            seed,
            [j.token for j in joined],
            [j.match.last_seq for j in joined],
            api,
            seat_apis,
        )

    async def open_streams(self, table: Table, slot: int) -> list[SeatBot]:
        """One stream per seat, each starting from the seq its join returned."""
        bots = [
            SeatBot(
                table,
                seat,
                self.prepared.start(table.seed) if table.seed else None,
                random.Random(f"{table.match_id}/{seat}/{self.config.seed}"),
                self.config,
            )
            for seat in range(self.config.players)
        ]
        try:
            snapshots = await asyncio.gather(
                *(bot.open(table.join_seqs[bot.seat], self.stats) for bot in bots)
            )
            for bot, snapshot in zip(bots, snapshots, strict=True):
                bot.check(snapshot)
        except BaseException:
            for bot in bots:
                bot.cancel()
            raise
        return bots

    async def play(self, bots: list[SeatBot]) -> None:
        """Play one match to its end; any failure gives the whole match up."""
        self.stats.started += 1
        tasks = [asyncio.create_task(bot.play(self.stats)) for bot in bots]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                error = task.exception()
                if error is not None:
                    raise error
        except (MatchFailed, Divergence) as error:
            if isinstance(error, Divergence):
                self.stats.errors["client DIVERGED"] += 1
                if not self.stats.failure:
                    self.stats.failure = f"{bots[0].table.match_id}: {error}"
            self.stats.abandoned += 1
            return
        finally:
            for task in tasks:
                task.cancel()
            for bot in bots:
                bot.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        self.stats.completed += 1

    async def slot(self, slot: int, first: list[SeatBot] | None) -> None:
        """Keep one match in play: when it ends (or fails), start the next."""
        bots = first
        while True:
            if bots is None:
                try:
                    bots = await self.open_streams(await self.create(slot), slot)
                except MatchFailed:
                    await asyncio.sleep(0.05)
                    continue
                except Divergence as error:
                    self.stats.errors["client DIVERGED"] += 1
                    self.stats.failure = self.stats.failure or str(error)
                    continue
            try:
                await self.play(bots)
            except Exception as error:  # a bug of the bench itself: count it, keep the slot
                self.stats.errors[f"client {type(error).__name__}"] += 1
                self.stats.failure = self.stats.failure or repr(error)
                self.stats.abandoned += 1
            bots = None

    async def run(self, barrier: Barrier) -> Stats:
        cfg = self.config
        options = [*GRPC_OPTIONS, ("grpc.use_local_subchannel_pool", 1)]
        channels = [
            [grpc.aio.insecure_channel(address, options=options) for _ in range(cfg.channels)]
            for address in cfg.addresses
        ]
        self.apis = [[service_pb2_grpc.MatchServiceStub(c) for c in cs] for cs in channels]
        limit = asyncio.Semaphore(cfg.setup_concurrency)

        async def bounded_create(slot: int) -> Table | None:
            async with limit:
                with contextlib.suppress(MatchFailed):
                    return await self.create(slot)
                return None

        async def bounded_open(slot: int, table: Table | None) -> list[SeatBot] | None:
            if table is None:
                return None
            async with limit:
                try:
                    return await self.open_streams(table, slot)
                except (MatchFailed, Divergence) as error:
                    self.stats.error("setup", error)
                    return None

        async def sync() -> None:
            await asyncio.to_thread(barrier.wait, cfg.setup_timeout)

        try:
            started = time.perf_counter()
            tables = await asyncio.gather(*(bounded_create(s) for s in range(cfg.slots)))
            self.stats.create_seconds = time.perf_counter() - started
            await sync()  # every process has created its matches: the parent reads RSS
            await sync()
            started = time.perf_counter()
            firsts = await asyncio.gather(*(bounded_open(s, t) for s, t in enumerate(tables)))
            self.stats.stream_seconds = time.perf_counter() - started
            await sync()  # every stream is open: the parent reads RSS and CPU
            await sync()
            self.stats.counting = True
            cpu = time.process_time()
            slots = [asyncio.create_task(self.slot(s, f)) for s, f in enumerate(firsts)]
            await asyncio.sleep(cfg.window)
            self.stats.counting = False
            self.stats.cpu_seconds = time.process_time() - cpu
            for task in slots:
                task.cancel()
            await asyncio.gather(*slots, return_exceptions=True)
        finally:
            for channel in (c for cs in channels for c in cs):
                await channel.close(None)
        return self.stats


def worker_main(config: WorkerConfig, barrier: Barrier, results: Queue[dict[str, Any]]) -> None:
    """Entry point of a client process: run, then send the stats back as a plain dict."""
    prepared = setup(config.game, players=config.players, options={})
    try:
        stats = asyncio.run(Worker(config, prepared).run(barrier))
        results.put(dataclasses.asdict(stats))
    except BaseException as error:  # the parent must hear about it, whatever it was
        with contextlib.suppress(Exception):
            barrier.abort()
        results.put({"fatal": f"{type(error).__name__}: {error}"})
        raise


# --- servers, processes, measurements ---------------------------------------------------------


def vm_rss_kb(pid: int) -> int:
    with Path(f"/proc/{pid}/status").open() as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of every thread of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


@dataclasses.dataclass(frozen=True)
class ServerProc:
    """One running server process: its address and (0: none) its metrics port."""

    process: subprocess.Popen[str]
    address: str
    metrics_port: int


def server_command(kind: Kind, workdir: Path, match_actions: int, store: str | None) -> list[str]:
    if kind == "noop":
        return [
            sys.executable,
            str(Path(__file__).resolve()),
            "--noop-server",
            "--noop-match-actions",
            str(match_actions),
        ]
    command = [str(CARDARENA), "serve", "--listen", f"{LOOPBACK}:0", "--log-level", "info"]
    if kind == "postgres":
        assert store is not None
        # Port 0: each replica's metrics on a port of its own, read back from its log.
        return [*command, "--store", store, "--metrics-port", "0"]
    return [*command, "--data-dir", str(workdir / "data"), "--metrics-port", "-1"]


def metrics_port_in(log_path: Path) -> int:
    """The ``metrics_port`` of the server's JSON ``listening`` log line (0 if not there)."""
    with contextlib.suppress(OSError):
        for line in log_path.read_text().splitlines():
            if '"event": "listening"' in line:
                with contextlib.suppress(ValueError, AttributeError):
                    return int(json.loads(line).get("metrics_port") or 0)
    return 0


def stop_process(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.contextmanager
def server_processes(
    kind: Kind, workdir: Path, match_actions: int, count: int = 1, store: str | None = None
) -> Iterator[list[ServerProc]]:
    """Start ``count`` servers of ``kind`` on 127.0.0.1:0 (several only for ``postgres``:
    replicas of one store); yield them once each has printed its address.

    Each runs in a session of its own, so a Ctrl-C reaches only this script, which then stops
    them in order (SIGTERM, their drain, SIGKILL after 30 s)."""
    processes: list[tuple[subprocess.Popen[str], Path]] = []
    try:
        for index in range(count):
            log_path = workdir / f"{kind}-{index}.log"
            with log_path.open("w") as log:
                process = subprocess.Popen(
                    server_command(kind, workdir, match_actions, store),
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                    start_new_session=True,
                )
            processes.append((process, log_path))
        servers: list[ServerProc] = []
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        for process, log_path in processes:
            assert process.stdout is not None
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([process.stdout], [], [], left)
            line = process.stdout.readline() if ready else ""
            if "listening on" not in line:
                tail = "".join(log_path.read_text().splitlines(keepends=True)[-15:])
                raise RuntimeError(
                    f"the {kind} server did not start ({line!r}); its log ends:\n{tail}"
                )
            address = line.strip().rsplit(" ", 1)[1]
            servers.append(ServerProc(process, address, metrics_port_in(log_path)))
        yield servers
    finally:
        for process, _ in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _ in processes:
            stop_process(process)


# --- a fresh PostgreSQL schema per replicated run ---------------------------------------------

LIVE_SCHEMAS: set[tuple[str, str]] = set()
"""(url, schema) created for a run and not yet dropped: dropped again at exit if need be."""


def check_postgres(url: str) -> str | None:
    """``None`` if PostgreSQL at ``url`` answers, else why not (one line)."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except (psycopg.Error, OSError) as error:
        return " ".join(str(error).split()) or type(error).__name__
    return None


def with_schema(url: str, schema: str) -> str:
    parts = urllib.parse.urlsplit(url)
    query = [*urllib.parse.parse_qsl(parts.query), ("schema", schema)]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def drop_schema(url: str, schema: str) -> None:
    """``DROP SCHEMA … CASCADE``, bounded in time; a failure is reported, not raised."""
    try:
        with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '20s'")
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        LIVE_SCHEMAS.discard((url, schema))
    except (psycopg.Error, OSError) as error:
        print(
            f"bench_server: could not drop schema {schema} ({' '.join(str(error).split())}); "
            f'drop it by hand: DROP SCHEMA "{schema}" CASCADE',
            file=sys.stderr,
        )


@contextlib.contextmanager
def fresh_schema(url: str) -> Iterator[str]:
    """A new schema name for the replicas (they create it), dropped when the run ends, however
    it ends; yields the store URL naming it."""
    schema = f"bench_{secrets.token_hex(5)}"
    LIVE_SCHEMAS.add((url, schema))
    try:
        yield with_schema(url, schema)
    finally:
        drop_schema(url, schema)


@dataclasses.dataclass
class RunResult:
    kind: Kind
    actions_per_s: float
    p50_ms: float
    p99_ms: float
    actions: int
    messages_per_action: float
    completed: int
    abandoned: int
    errors: Counter[str]
    server_cpu_us_per_action: float
    server_cpu_share: float
    client_cpu_share: float
    rss_idle_mb: float
    rss_per_match_kb: float
    rss_per_match_streams_kb: float
    rss_end_mb: float
    setup_seconds: float
    stream_seconds: float
    failure: str
    # Summed over every server process (replicas), and what PostgreSQL's processes spent.
    servers: int = 1
    postgres_cpu_us_per_action: float = 0.0
    postgres_cpu_share: float = 0.0
    # From the servers' metrics (NaN when they export none): SubmitActions a replica forwarded
    # to the owner, per successful action; group commits per action; write requests per commit.
    forwarded_fraction: float = float("nan")
    commits_per_action: float = float("nan")
    requests_per_commit: float = float("nan")
    # Table reads (index and sequential scans, from pg_stat_user_tables) in the run's schema
    # per action: the owner's checks inside each append, and the forwarding replicas' and the
    # followers' lookups and catch-up reads. Other users of the database do not count.
    postgres_scans_per_action: float = float("nan")


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def postgres_cpu() -> dict[int, float]:
    """CPU seconds of every ``postgres`` process visible in /proc (the local database server:
    its backends, one per connection of the replicas, and its writers), by pid."""
    out: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            text = (entry / "stat").read_text()
            if text[text.index("(") + 1 : text.rindex(")")] == "postgres":
                fields = text.rsplit(")", 1)[1].split()
                out[int(entry.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return out


SCRAPED = {
    'cardarena_forwarded_total{method="SubmitAction"}': "forwarded",
    "cardarena_store_commit_batch_size_count": "commits",
    "cardarena_store_commit_batch_size_sum": "requests",
}


def postgres_scans(store: str | None) -> int | None:
    """Index and sequential scans so far of the tables in the schema of ``store`` (PostgreSQL's
    statistics, which backends report within a second or so), or ``None``."""
    if store is None:
        return None
    parts = urllib.parse.urlsplit(store)
    query = urllib.parse.parse_qsl(parts.query)
    schema = dict(query).get("schema", "public")
    url = urllib.parse.urlunsplit(
        parts._replace(query=urllib.parse.urlencode([(k, v) for k, v in query if k != "schema"]))
    )
    try:
        with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
            row = conn.execute(
                "SELECT sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0))"
                " FROM pg_stat_user_tables WHERE schemaname = %s",
                (schema,),
            ).fetchone()
    except (psycopg.Error, OSError):
        return None
    return None if row is None or row[0] is None else int(row[0])


def scrape(servers: Sequence[ServerProc]) -> Counter[str]:
    """The few counters the report uses, summed over the servers' Prometheus endpoints."""
    total: Counter[str] = Counter()
    for server in servers:
        if not server.metrics_port:
            continue
        url = f"http://{LOOPBACK}:{server.metrics_port}/metrics"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                text = response.read().decode()
        except OSError:
            total["failed"] += 1
            continue
        for line in text.splitlines():
            name, _, value = line.rpartition(" ")
            if name in SCRAPED:
                total[SCRAPED[name]] += int(float(value))
        total["scraped"] += 1
    return total


def run_once(
    kind: Kind,
    args: argparse.Namespace,
    window: float,
    repeat: int,
    match_actions: int,
    count: int = 1,
    store: str | None = None,
) -> RunResult:
    with (
        tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as tmp,
        server_processes(kind, Path(tmp), match_actions, count, store) as servers,
    ):
        pids = [server.process.pid for server in servers]
        ctx = multiprocessing.get_context("spawn")
        barrier = ctx.Barrier(args.client_procs + 1)
        results: Queue[dict[str, Any]] = ctx.Queue()
        shares = [
            args.matches // args.client_procs + (i < args.matches % args.client_procs)
            for i in range(args.client_procs)
        ]
        workers = [
            ctx.Process(
                target=worker_main,
                args=(
                    WorkerConfig(
                        addresses=tuple(server.address for server in servers),
                        kind=kind,
                        worker=i,
                        slots=share,
                        game=args.game,
                        players=args.players,
                        window=window,
                        channels=args.channels,
                        setup_concurrency=args.setup_concurrency,
                        setup_timeout=args.setup_timeout,
                        pattern=args.pattern,
                        seed=args.seed * 1000 + repeat,
                    ),
                    barrier,
                    results,
                ),
                daemon=True,
            )
            for i, share in enumerate(shares)
        ]
        rss_idle = sum(vm_rss_kb(pid) for pid in pids)
        profiler: subprocess.Popen[bytes] | None = None
        try:
            for worker in workers:
                worker.start()
            barrier.wait(args.setup_timeout)
            rss_created = sum(vm_rss_kb(pid) for pid in pids)
            barrier.wait(args.setup_timeout)
            barrier.wait(args.setup_timeout)
            rss_streams = sum(vm_rss_kb(pid) for pid in pids)
            metrics_start = scrape(servers)
            scans_start = postgres_scans(store)
            pg_start = postgres_cpu()
            cpu_start = sum(cpu_seconds(pid) for pid in pids)
            if args.py_spy and kind == "durable" and repeat == 0:
                profiler = start_py_spy(args.py_spy, pids[0], window)
            barrier.wait(args.setup_timeout)
            started = time.monotonic()
            time.sleep(window)
            cpu_used = sum(cpu_seconds(pid) for pid in pids) - cpu_start
            pg_end = postgres_cpu()
            elapsed = time.monotonic() - started
            metrics_end = scrape(servers)
            scans_end = postgres_scans(store)
            rss_end = sum(vm_rss_kb(pid) for pid in pids)
            gathered = [results.get(timeout=args.setup_timeout + 60) for _ in workers]
        except Exception as error:
            fatal = [r["fatal"] for r in drain(results) if "fatal" in r]
            raise RuntimeError(f"the {kind} run failed: {error!r} {fatal}") from error
        finally:
            if profiler is not None:
                profiler.wait(window + 60)
            for worker in workers:
                worker.join(30)
                if worker.is_alive():
                    worker.kill()
        fatal = [r["fatal"] for r in gathered if "fatal" in r]
        if fatal:
            raise RuntimeError(f"a client process of the {kind} run failed: {fatal}")
    merged = Stats()
    client_cpu = 0.0
    for part in gathered:
        merged.actions += part["actions"]
        merged.messages += part["messages"]
        merged.latencies.extend(part["latencies"])
        merged.errors.update(part["errors"])
        merged.completed += part["completed"]
        merged.abandoned += part["abandoned"]
        merged.create_seconds = max(merged.create_seconds, part["create_seconds"])
        merged.stream_seconds = max(merged.stream_seconds, part["stream_seconds"])
        merged.failure = merged.failure or part["failure"]
        client_cpu += part["cpu_seconds"]
    latencies = sorted(merged.latencies)
    actions = max(merged.actions, 1)
    # A backend that ended in the window is lost; one that started counts from zero.
    pg_used = sum(seconds - pg_start.get(pid, 0.0) for pid, seconds in pg_end.items())
    metered = [s for s in servers if s.metrics_port]
    complete = bool(metered) and all(
        m["scraped"] == len(metered) for m in (metrics_start, metrics_end)
    )
    delta = metrics_end - metrics_start if complete else Counter[str]()
    nan = float("nan")
    return RunResult(
        kind=kind,
        actions_per_s=merged.actions / elapsed,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        actions=merged.actions,
        messages_per_action=merged.messages / args.players / actions,
        completed=merged.completed,
        abandoned=merged.abandoned,
        errors=merged.errors,
        server_cpu_us_per_action=cpu_used / actions * 1e6,
        server_cpu_share=cpu_used / elapsed,
        client_cpu_share=client_cpu / elapsed,
        rss_idle_mb=rss_idle / 1024,
        rss_per_match_kb=(rss_created - rss_idle) / args.matches,
        rss_per_match_streams_kb=(rss_streams - rss_idle) / args.matches,
        rss_end_mb=rss_end / 1024,
        setup_seconds=merged.create_seconds,
        stream_seconds=merged.stream_seconds,
        failure=merged.failure,
        servers=len(servers),
        postgres_cpu_us_per_action=pg_used / actions * 1e6,
        postgres_cpu_share=pg_used / elapsed,
        forwarded_fraction=delta["forwarded"] / actions if complete else nan,
        commits_per_action=delta["commits"] / actions if complete else nan,
        requests_per_commit=delta["requests"] / max(delta["commits"], 1) if complete else nan,
        postgres_scans_per_action=(
            nan if scans_start is None or scans_end is None else (scans_end - scans_start) / actions
        ),
    )


def drain(results: Queue[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with contextlib.suppress(Exception):
        while True:
            out.append(results.get(timeout=0.5))
    return out


def find_py_spy() -> str | None:
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


def start_py_spy(svg: Path, pid: int, window: float) -> subprocess.Popen[bytes]:
    py_spy = find_py_spy()
    assert py_spy is not None  # checked with the arguments
    command = [
        py_spy,
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(max(1, int(window))),
        "--rate",
        "200",
        "--output",
        str(svg),
        "--format",
        {".txt": "raw", ".json": "speedscope"}.get(svg.suffix, "flamegraph"),
        "--nonblocking",
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --- arguments and the report -----------------------------------------------------------------


def bounded_int(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {low}..{high}, got {value}")
        return value

    return parse


def seconds_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 2 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"expected 2..3600 seconds, got {text}")
    return value


def loopback_listen(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or host != LOOPBACK or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected {LOOPBACK}:PORT (loopback only), got {text!r}")
    return text


def replica_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts like 1,2,3, got {text!r}") from None
    if not counts or any(not 1 <= n <= 8 for n in counts) or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"expected distinct counts of 1..8, got {text!r}")
    return counts


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def postgres_url(text: str) -> str:
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("postgresql", "postgres") or not parts.path.strip("/"):
        raise argparse.ArgumentTypeError(f"expected postgresql://user@host:port/db, got {text!r}")
    if parts.hostname not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(f"the database must be on loopback, got {parts.hostname}")
    if any(key == "schema" for key, _ in urllib.parse.parse_qsl(parts.query)):
        raise argparse.ArgumentTypeError("no schema= here: each configuration gets a fresh one")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Load benchmark of cardarena's server, next to a no-op gRPC ceiling.",
        epilog="Run on purpose, not as a test: it asserts nothing about speed.",
    )
    parser.add_argument(
        "--matches",
        type=bounded_int(1, 5000),
        default=200,
        help="concurrent matches, kept in play all along (default 200)",
    )
    parser.add_argument(
        "--seconds",
        type=seconds_value,
        default=50.0,
        help="total play time, split over the 2 x repeats server runs; setup comes on top "
        "(default 50, about 60 s in all)",
    )
    parser.add_argument(
        "--repeats",
        type=bounded_int(1, 9),
        default=1,
        help="runs of each server; the report shows medians (default 1)",
    )
    parser.add_argument("--game", choices=sorted(GAMES), default="hexathlon")
    parser.add_argument("--players", type=bounded_int(2, 8), default=4, help="(default 4)")
    parser.add_argument(
        "--pattern",
        choices=("turns", "replica", "resnapshot"),
        default="turns",
        help="turns: act on the stream's YourTurn prompts (default); replica: one stream per "
        "seat, turns and legal actions from a client-side engine replica; resnapshot: reopen "
        "the stream for a fresh snapshot before every action",
    )
    parser.add_argument(
        "--client-procs",
        type=bounded_int(1, 16),
        default=1,
        help="client processes sharing the matches (default 1)",
    )
    parser.add_argument(
        "--channels",
        type=bounded_int(1, 64),
        default=4,
        help="gRPC connections per client process (to each replica with --replicas; default 4)",
    )
    parser.add_argument(
        "--setup-concurrency",
        type=bounded_int(1, 1000),
        default=64,
        help="matches created or opened at once during setup (default 64)",
    )
    parser.add_argument(
        "--setup-timeout",
        type=seconds_value,
        default=300.0,
        help="bound on each setup phase (default 300)",
    )
    parser.add_argument("--seed", type=bounded_int(0, 2**31), default=1, help="(default 1)")
    parser.add_argument(
        "--py-spy",
        type=Path,
        metavar="FILE",
        help="record py-spy samples of the durable server's first window: a flame graph "
        "(.svg), collapsed stacks (.txt) or speedscope (.json)",
    )
    parser.add_argument(
        "--replicas",
        type=replica_counts,
        metavar="N,N,...",
        help="compare sharing: the SQLite single process, the no-op ceiling, then N "
        "cardarena replicas on one PostgreSQL (a fresh schema each) for each N, e.g. 1,2,3",
    )
    parser.add_argument(
        "--store-url",
        type=postgres_url,
        default=DEFAULT_STORE_URL,
        help=f"the PostgreSQL of --replicas, on loopback (default {DEFAULT_STORE_URL})",
    )
    parser.add_argument("--noop-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--noop-match-actions", type=bounded_int(0, 10**6), default=0, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--listen", type=loopback_listen, default=f"{LOOPBACK}:0", help=argparse.SUPPRESS
    )
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.noop_server:
        return args
    spec = GAMES[args.game]
    if args.players not in spec.players:
        parser.error(f"{args.game} is for {', '.join(map(str, spec.players))} players")
    if args.client_procs > args.matches:
        parser.error("--client-procs cannot exceed --matches")
    if args.py_spy is not None and find_py_spy() is None:
        parser.error("--py-spy needs py-spy on PATH or in the venv (pip install py-spy)")
    if not CARDARENA.exists():
        parser.error(f"{CARDARENA} not found: install the project into this interpreter's venv")
    return args


def mean_match_actions(game: str, players: int, matches: int = 20) -> int:
    """How many actions a random match of ``game`` takes, on average (engine only, ~50 ms)."""
    prepared = setup(game, players=players, options={})
    rng = random.Random(0)
    total = 0
    for index in range(matches):
        match = prepared.start(hashlib.sha256(f"length/{index}".encode()).digest())
        while not match.over:
            seat = match.to_act
            assert seat is not None
            match.apply(seat, rng.choice(match.legal_actions()))
            total += 1
    return max(1, total // matches)


def median_of(runs: Sequence[RunResult], name: str) -> float:
    return float(statistics.median(getattr(r, name) for r in runs))


def report(args: argparse.Namespace, runs: dict[Kind, list[RunResult]], window: float) -> None:
    durable, noop = runs["durable"], runs["noop"]
    pattern = {
        "turns": "one StreamEvents stream per seat for the whole match; act on each YourTurn "
        "(random legal action, expected_seq = its seq)",
        "replica": "one StreamEvents stream per seat for the whole match; turn and legal "
        "actions from a client-side engine replica (the bench chose each seed)",
        "resnapshot": "one stream per seat, reopened for a fresh snapshot before every action; "
        "random choice among snapshot.legal_actions",
    }[args.pattern]
    print(
        f"cardarena server load: {args.game}, {args.players} players, {args.matches} concurrent "
        f"matches, {args.client_procs} client process(es) x {args.channels} channels, "
        f"{window:.1f} s per run, {args.repeats} repeat(s)"
        + (" (medians)" if args.repeats > 1 else "")
    )
    print(f"pattern: {pattern}")
    rows: list[tuple[str, str, int]] = [
        ("player actions/s", "actions_per_s", 0),
        ("SubmitAction p50 (ms)", "p50_ms", 2),
        ("SubmitAction p99 (ms)", "p99_ms", 2),
        ("stream messages per action per seat", "messages_per_action", 2),
        ("matches completed", "completed", 0),
        ("matches abandoned", "abandoned", 0),
        ("server CPU per action (us)", "server_cpu_us_per_action", 0),
        ("server CPU (cores busy)", "server_cpu_share", 2),
        ("client CPU (cores busy)", "client_cpu_share", 2),
        ("server RSS idle (MB)", "rss_idle_mb", 1),
        ("RSS per hosted match (KB)", "rss_per_match_kb", 1),
        ("RSS per match + 4 streams (KB)", "rss_per_match_streams_kb", 1),
        ("server RSS at end (MB)", "rss_end_mb", 1),
        ("setup: create+join (s)", "setup_seconds", 1),
        ("setup: open streams (s)", "stream_seconds", 1),
    ]
    print(f"{'':36}{'durable (SQLite)':>18}{'no-op ceiling':>18}")
    for label, name, digits in rows:
        print(
            f"{label:36}{median_of(durable, name):>18,.{digits}f}"
            f"{median_of(noop, name):>18,.{digits}f}"
        )
    for kind, results in runs.items():
        errors: Counter[str] = Counter()
        for result in results:
            errors.update(result.errors)
        text = ", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) or "none"
        print(f"errors ({kind}): {text}")
        failures = [r.failure for r in results if r.failure]
        if failures:
            print(f"first divergence ({kind}): {failures[0]}")
    if args.repeats > 1:
        for kind, results in runs.items():
            each = ", ".join(f"{r.actions_per_s:,.0f}" for r in results)
            print(f"actions/s per run ({kind}): {each}")
    ratio = median_of(durable, "actions_per_s") / max(median_of(noop, "actions_per_s"), 1e-9)
    verdict = "meets" if ratio >= TARGET_RATIO else "below"
    print(
        f"durable / no-op actions/s: {ratio:.2f} "
        f"({verdict} the issue's target of {TARGET_RATIO:.2f})"
    )
    # Less sensitive to other load on the machine: what each action costs the server's CPU.
    cost = median_of(noop, "server_cpu_us_per_action") / max(
        median_of(durable, "server_cpu_us_per_action"), 1e-9
    )
    print(f"no-op / durable server CPU per action: {cost:.2f} (the ratio if both were CPU-bound)")


# --- the replica comparison (--replicas) ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Configuration:
    label: str
    kind: Kind
    count: int = 1  # server processes


def configurations(counts: Sequence[int]) -> list[Configuration]:
    return [
        Configuration("SQLite, 1 process", "durable"),
        Configuration("no-op ceiling", "noop"),
        *(
            Configuration(f"PostgreSQL, {n} replica{'s' if n > 1 else ''}", "postgres", n)
            for n in counts
        ),
    ]


def cell(value: float, digits: int, width: int, suffix: str = "") -> str:
    text = "-" if math.isnan(value) else f"{value:,.{digits}f}{suffix}"  # NaN: not measured
    return f"{text:>{width}}"


def report_replicas(
    args: argparse.Namespace,
    configs: Sequence[Configuration],
    runs: dict[str, list[RunResult]],
    window: float,
) -> None:
    print(
        f"cardarena replicas on one PostgreSQL vs the SQLite single process: {args.game}, "
        f"{args.players} players, {args.matches} concurrent matches, {args.client_procs} client "
        f"process(es) x {args.channels} channels per server, {window:.1f} s per run, "
        f"{args.repeats} repeat(s)" + (" (medians)" if args.repeats > 1 else "")
    )
    print(
        "clients: each match is created on a random replica (which owns it); each seat joins, "
        "streams and submits through a random replica, so with N replicas about (N-1)/N of the "
        "actions are forwarded to the owner"
    )
    base = runs[configs[0].label]
    base_rate = median_of(base, "actions_per_s")
    base_cpu = median_of(base, "server_cpu_us_per_action")
    base_all = base_cpu + median_of(base, "postgres_cpu_us_per_action")
    print(
        f"{'configuration':24}{'actions/s':>10}{'p50 ms':>9}{'p99 ms':>10}{'server us/act':>15}"
        f"{'x actions/s':>13}{'x server CPU':>14}{'errors':>8}"
    )
    for config in configs:
        results = runs[config.label]
        failed = sum(sum(r.errors.values()) for r in results)
        print(
            f"{config.label:24}{cell(median_of(results, 'actions_per_s'), 0, 10)}"
            f"{cell(median_of(results, 'p50_ms'), 2, 9)}{cell(median_of(results, 'p99_ms'), 2, 10)}"
            f"{cell(median_of(results, 'server_cpu_us_per_action'), 0, 15)}"
            f"{cell(median_of(results, 'actions_per_s') / base_rate, 2, 13)}"
            f"{cell(median_of(results, 'server_cpu_us_per_action') / base_cpu, 2, 14)}"
            f"{failed:>8}"
        )
    print(
        "where the CPU goes (server = all replica processes; PG = every postgres process on "
        "this machine, so other users of the database show in it: see the SQLite row; "
        "PG reads = table scans in the run's schema)"
    )
    print(
        f"{'configuration':24}{'PG us/act':>10}{'srv+PG us/act':>14}{'x srv+PG':>10}"
        f"{'cores: srv':>11}{'PG':>6}{'clients':>8}{'forwarded':>10}{'commits/act':>12}"
        f"{'req/commit':>11}{'PG reads/act':>13}{'RSS MB':>8}"
    )
    for config in configs:
        results = runs[config.label]
        pg = median_of(results, "postgres_cpu_us_per_action")
        both = statistics.median(
            r.server_cpu_us_per_action + r.postgres_cpu_us_per_action for r in results
        )
        print(
            f"{config.label:24}{cell(pg, 0, 10)}{cell(both, 0, 14)}"
            f"{cell(both / base_all, 2, 10)}"
            f"{cell(median_of(results, 'server_cpu_share'), 2, 11)}"
            f"{cell(median_of(results, 'postgres_cpu_share'), 2, 6)}"
            f"{cell(median_of(results, 'client_cpu_share'), 2, 8)}"
            f"{cell(median_of(results, 'forwarded_fraction') * 100, 0, 10, '%')}"
            f"{cell(median_of(results, 'commits_per_action'), 2, 12)}"
            f"{cell(median_of(results, 'requests_per_commit'), 1, 11)}"
            f"{cell(median_of(results, 'postgres_scans_per_action'), 2, 13)}"
            f"{cell(median_of(results, 'rss_end_mb'), 0, 8)}"
        )
    expected = ", ".join(
        f"{c.count} replica(s) {100 * (c.count - 1) / c.count:.0f}%"
        for c in configs
        if c.kind == "postgres"
    )
    print(f"forwarded SubmitActions expected: {expected}")
    for config in configs:
        results = runs[config.label]
        errors: Counter[str] = Counter()
        for result in results:
            errors.update(result.errors)
        if errors:
            text = ", ".join(f"{k}: {v}" for k, v in sorted(errors.items()))
            print(f"errors ({config.label}): {text}")
        failures = [r.failure for r in results if r.failure]
        if failures:
            print(f"first divergence ({config.label}): {failures[0]}")
        if args.repeats > 1:
            each = ", ".join(f"{r.actions_per_s:,.0f}" for r in results)
            print(f"actions/s per run ({config.label}): {each}")


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def compare_replicas(args: argparse.Namespace) -> int:
    """One run of every configuration per repeat (the order reversed every other repeat);
    a fresh schema per replicated run, dropped afterwards, interrupted or not."""
    problem = check_postgres(args.store_url)
    if problem is not None:
        print(
            f"bench_server: PostgreSQL at {args.store_url} is unreachable: {problem}",
            file=sys.stderr,
        )
        return 2
    configs = configurations(args.replicas)
    window = args.seconds / (len(configs) * args.repeats)
    match_actions = mean_match_actions(args.game, args.players) if args.pattern == "turns" else 0
    runs: dict[str, list[RunResult]] = {c.label: [] for c in configs}
    signal.signal(signal.SIGTERM, interrupt)  # stop servers and drop schemas on SIGTERM too
    began = time.monotonic()
    try:
        for repeat in range(args.repeats):
            for config in configs if repeat % 2 == 0 else configs[::-1]:
                with contextlib.ExitStack() as stack:
                    store = None
                    if config.kind == "postgres":
                        store = stack.enter_context(fresh_schema(args.store_url))
                    result = run_once(
                        config.kind, args, window, repeat, match_actions, config.count, store
                    )
                runs[config.label].append(result)
                print(
                    f"[{time.monotonic() - began:6.1f} s] {config.label} run {repeat + 1}: "
                    f"{result.actions_per_s:,.0f} actions/s, "
                    f"{result.server_cpu_us_per_action:,.0f} us server CPU per action",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        print("bench_server: interrupted; servers stopped, schemas dropped", file=sys.stderr)
        return 130
    finally:
        for url, schema in sorted(LIVE_SCHEMAS):
            drop_schema(url, schema)
    sys.stderr.flush()
    report_replicas(args, configs, runs, window)
    if args.py_spy:
        print(f"py-spy profile of the SQLite server: {args.py_spy}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.noop_server:
        asyncio.run(serve_noop(args.listen, args.noop_match_actions))
        return 0
    try:
        if args.replicas:
            return compare_replicas(args)
        return compare_noop(args)
    except RuntimeError as error:  # a server or client process failed: said, no traceback
        print(f"bench_server: {error}", file=sys.stderr)
        return 1


def compare_noop(args: argparse.Namespace) -> int:
    """The default: the SQLite server and the no-op ceiling, ``--repeats`` times each."""
    window = args.seconds / (2 * args.repeats)
    # The no-op server ends a match after as many actions as a real one takes on average.
    match_actions = mean_match_actions(args.game, args.players) if args.pattern == "turns" else 0
    runs: dict[Kind, list[RunResult]] = {"durable": [], "noop": []}
    began = time.monotonic()
    for repeat in range(args.repeats):
        order: tuple[Kind, Kind] = ("durable", "noop") if repeat % 2 == 0 else ("noop", "durable")
        for kind in order:
            result = run_once(kind, args, window, repeat, match_actions)
            runs[kind].append(result)
            print(
                f"[{time.monotonic() - began:6.1f} s] {kind} run {repeat + 1}: "
                f"{result.actions_per_s:,.0f} actions/s, {result.completed} matches completed",
                file=sys.stderr,
                flush=True,
            )
    sys.stderr.flush()
    report(args, runs, window)
    if args.py_spy:
        print(f"py-spy profile of the durable server: {args.py_spy}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
