"""Floods against a real server: a victim match's action latency and the server's memory,
quiet and under each flood of issue 29, in one run. A benchmark run on purpose: it asserts
nothing.

Why: the issue's target is that no anonymous client slows anyone's match: under each flood the
victim's p99 within 2x of the quiet run, the server's RSS within a stated bound, and neither
the victim nor a legitimate bot host refused. This measures exactly that.

Method: one ``cardarena serve`` (SQLite in a temporary dir, gRPC-Web gateway on, default
limits, open) on 127.0.0.1; with ``--pin`` (the default on two CPUs or more) each flood
process on the last CPU: an attacker's CPU is not the server's, and on one machine an
unpinned flooder's own work (a connection storm takes most of a core) would take the server's
CPUs too, which no server can defend against. In this process the *victim* plays Hexathlon matches back to back,
four random bots over the normal client (``ArenaClient.play`` with unary ``SubmitAction``,
``--think`` ms before each action): an action's latency is its ``SubmitAction`` call, retries
included; a failed call or set-up is a refusal of the victim, and so is a *browser probe* (a
gRPC-Web ``ListGames`` through the gateway on a fresh connection from a loopback address of
its own, four a second) not answered within 5 s. Each flood runs in a process of its own,
``--ramp`` s to build up, ``--seconds`` s measured, ``--settle`` s after it stops:

* ``quiet``: no flood, the peer of every other window;
* ``burn``: no request, a process that only computes on the flood's CPU: the machine's own
  floor (on a VM's two vCPUs a busy neighbour slows the other CPU too), the control of every
  flood below;
* ``churn``: the ``idle`` flood's connections against a listener in the flood's own process
  that refuses each with a 503: the server is not involved, so this is what the connection
  churn costs the machine's kernel, the floor of ``idle`` and ``bodies``;
* ``tournaments``: ``--readers`` callers loop ``GetTournament`` (a 1,000-line page of its
  plan at a random offset, and without) and ``ListTournaments`` on a cancelled tournament of
  ~100,000 planned matches (issue 29.1);
* ``spectators``: ``WatchMatch`` streams of the victim's match from ``--addresses`` loopback
  addresses (a local relay per address binds the source), ``--streams`` each, reopened (29.2);
  one stream in 40 asks for the costliest kind, unbatched (a match has 2 such places; it
  asks for a batched one when told to), the rest for batched ones: every place taken, and
  the rest waiting for one (or refused) and asking again a second after each refusal;
* ``ended``: ``--readers`` callers loop ``ListMatches(page_size=100)`` and ``GetMatchLog`` of
  the matches ended by ``--fill`` s of closed-loop play before the windows (29.3);
* ``bodies``: 8 callers send 16 MiB requests to the gRPC port, 8 to the gateway (29.4);
* ``idle``: ``--idle`` gateway connections from 250 loopback addresses (about four each, as
  many browsers would hold) sending nothing, each opened again as soon as it is closed, or
  50 ms after a 503 whatever its ``Retry-After`` asks (29.5);
* ``bothost``: the server benchmark's bot host (``scripts/bench``), ``--host-matches``
  matches of four seats on one ``Play`` stream each from one address, paced at ``--host-rate``
  actions/s per match; its set-up and play errors are its refusals (29.6). It cancels its
  matches when its window ends, as a host that stops does: an open server counts an
  address's anonymous matches until they end (``serve --anonymous-matches``), and a host that
  left 200 running would be refused the next window's 200 (and so would the victim, from the
  same loopback address), until ``--idle-expiry`` ends them.

Per window: the victim's actions, p50/p99 (ms) and p99 over its repeat's quiet p99; the
server's peak VmRSS with its gateway process's (sampled every 0.25 s) over that quiet peak and
over the window's start; the CPU the server, its gateway and the flooder used (% of one core:
on two cores they compete), and the server's event loop on a core and waiting for one (the
kernel's schedstat); the flooder's calls by outcome; the victim's refusals; the browser probes
answered and their p50. ``--repeats`` runs every window again; then each kind's actions of
every repeat pooled: p50, p99 and p99 over the pooled quiet p99 (a 20 s window's p99 is its
ninth slowest action or so, which one stray stall of the machine moves by half). Targets: the
pooled p99 ratio at most 2, no refusal of the victim or the bot host in any window, RSS at
most ``--rss-bound`` MiB over the quiet peak.

    .venv/bin/python scripts/bench_flood.py                        # about 2½ minutes
    .venv/bin/python scripts/bench_flood.py --floods idle,bodies --seconds 30 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import queue
import random
import resource
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from cardarena.clients.bots.state import SeatState
from cardarena.clients.client import ArenaClient, Entrant, Ticket, new_secret
from cardarena.clients.client.channel import RETRYABLE
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc, tournament_pb2_grpc
from cardarena.v1 import tournament_pb2 as tpb

if TYPE_CHECKING:  # mypy names the modules from the repository root: scripts.bench
    from scripts.bench.bots import WorkerConfig
    from scripts.bench.load import worker_main
    from scripts.bench.measure import children, cpu_seconds, loop_sched, percentile, vm_rss_kb
else:  # run as a script, sys.path[0] is scripts/: the package is the sibling bench
    from bench.bots import WorkerConfig
    from bench.load import worker_main
    from bench.measure import children, cpu_seconds, loop_sched, percentile, vm_rss_kb

FLOODS = ("burn", "churn", "tournaments", "spectators", "ended", "bodies", "idle", "bothost")
CARDARENA = Path(sys.executable).parent / "cardarena"
GAME, PLAYERS, BIG = "hexathlon", 4, 16 << 20
LIST_GAMES = "/cardarena.v1.MatchService/ListGames"
Tally = Counter[str]


def web_call(length: int) -> bytes:
    """A gRPC-Web request head for ``ListGames`` with a message of ``length`` bytes."""
    head = f"POST {LIST_GAMES} HTTP/1.1\r\nhost: x\r\ncontent-type: application/grpc-web+proto"
    return f"{head}\r\ncontent-length: {length + 5}\r\n\r\n".encode() + struct.pack(
        ">BI", 0, length
    )


def loopback(group: int, index: int) -> str:
    """A loopback address of its own: group 1 floods, 2 the browser probes."""
    return f"127.0.{group}.{index % 250 + 1}"


def channel(address: str) -> grpc.aio.Channel:
    options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
    return grpc.aio.insecure_channel(address, options=options)


@dataclass
class Server:
    process: subprocess.Popen[str]
    address: str
    web_port: int


@contextlib.contextmanager
def serving(workdir: Path) -> Iterator[Server]:
    """``cardarena serve`` on 127.0.0.1:0 with its gateway; SIGTERM (its drain) at the end."""
    command = [str(CARDARENA), "serve", "--listen", "127.0.0.1:0", "--web", "127.0.0.1:0"]
    command += ["--data-dir", str(workdir / "data"), "--metrics-port", "-1"]
    with (workdir / "server.log").open("w") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline().strip().rsplit(" ", 1) for _ in range(2)]
        if "listening on" not in lines[0][0] or "web on" not in lines[1][0]:
            raise RuntimeError(f"the server did not start: {lines}; see {workdir}/server.log")
        yield Server(process, lines[0][1], int(lines[1][1].rsplit(":", 1)[1]))
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


def pin(pid: int, cpus: set[int] | None) -> None:
    """Keep process ``pid`` on ``cpus`` (``None``: wherever the kernel puts it)."""
    if cpus:
        os.sched_setaffinity(pid, cpus)


def flood_cpus(enabled: bool) -> set[int] | None:
    """With ``--pin`` and two CPUs or more, the last: every flood (and the bot host) runs
    there, the server and the victim wherever the kernel puts them, so that a flooder's own
    work takes at most one CPU, as a remote client's would take none of the server's; else
    ``None``. (Pinning the server to the other CPUs as well would put its store's writer
    thread on its event loop's CPU, which no deployment does.)"""
    cpus = sorted(os.sched_getaffinity(0))
    return {cpus[-1]} if enabled and len(cpus) >= 2 else None


# --- the victim --------------------------------------------------------------------------


class Victim(ArenaClient):
    """The normal client playing matches back to back with four random bots, its
    ``SubmitAction`` calls timed; each latency and refusal is kept with its time."""

    def __init__(self, address: str, think: float, current: Any) -> None:
        super().__init__(address)
        self.think, self.current, self.rng = think, current, random.Random(7)
        self.latencies: list[tuple[float, float]] = []
        self.refusals: list[tuple[float, str]] = []
        self.probes: list[tuple[float, float]] = []

    def refused(self, what: str) -> None:
        self.refusals.append((time.monotonic(), what))

    async def decide(self, state: SeatState) -> int:
        await asyncio.sleep(self.think)
        return self.rng.choice(state.legal)

    async def run(self) -> None:
        async with self:
            while True:
                try:
                    info = await self.create_match(GAME, players=PLAYERS)
                    self.current.value = info.match_id.encode()  # for the spectators
                    tickets = [await self.join(info.match_id, seat=s) for s in range(PLAYERS)]
                    async with asyncio.TaskGroup() as group:
                        for ticket in tickets:
                            group.create_task(self.play(ticket, decide=self.decide, via="events"))
                except* Exception as failed:  # counted, and the next match begins
                    for error in failed.exceptions:
                        code = error.code() if isinstance(error, grpc.aio.AioRpcError) else None
                        self.refused(code.name if code else type(error).__name__)
                await asyncio.sleep(0.05)

    async def submit(
        self, ticket: Ticket, action: int, expected_seq: int
    ) -> spb.SubmitActionResponse:
        started = time.perf_counter()
        try:
            response = await super().submit(ticket, action, expected_seq)
        except grpc.aio.AioRpcError as error:
            if error.code() in RETRYABLE:  # the seat reopens its stream: counted only here
                self.refused(f"SubmitAction {error.code().name}")
            raise
        self.latencies.append((time.monotonic(), time.perf_counter() - started))
        return response

    async def probe_browsers(self, web_port: int) -> None:
        """A browser's first call, four a second, each from a loopback address of its own."""
        for n in range(1 << 30):
            await asyncio.sleep(0.25)
            started = time.monotonic()
            try:
                async with asyncio.timeout(5):
                    reader, writer = await asyncio.open_connection(
                        "127.0.0.1", web_port, local_addr=(loopback(2, n), 0)
                    )
                    writer.write(web_call(0))
                    answer = await reader.read()
                    writer.close()
                if not answer.startswith(b"HTTP/1.1 200") or b"grpc-status:0" not in answer:
                    raise OSError(answer[:12].decode(errors="replace") or "closed")
                self.probes.append((started, time.monotonic() - started))
            except (OSError, TimeoutError) as error:
                self.refused(f"browser {type(error).__name__}")


# --- the floods, each in a process of its own ------------------------------------------------


@dataclass
class Flood:
    """What a flood process is given: the server, the settings, when to stop. Each call's
    outcome is counted (``OK``, a status code, or what the call returns)."""

    address: str
    web_port: int
    args: argparse.Namespace
    current: Any  # the victim's match id (a shared array of bytes)
    stop: Any  # a multiprocessing Event
    extra: dict[str, str] = field(default_factory=dict)
    tally: Tally = field(default_factory=Counter)
    details: dict[str, str] = field(default_factory=dict)  # a status's first message

    async def loop(self, concurrency: int, call: Callable[[int], Awaitable[str | None]]) -> None:
        """``concurrency`` callers repeating ``call`` until told to stop."""

        async def caller(index: int) -> None:
            while not self.stop.is_set():
                try:
                    outcome = await call(index) or "OK"
                except grpc.aio.AioRpcError as error:
                    outcome = error.code().name
                    self.details.setdefault(outcome, error.details() or "")
                except Exception as error:
                    outcome = type(error).__name__
                    await asyncio.sleep(0.05)
                self.tally["calls"] += 1
                self.tally[outcome] += 1

        tasks = [asyncio.create_task(caller(i)) for i in range(concurrency)]
        while not self.stop.is_set():
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def flood_tournaments(flood: Flood) -> None:
    async with channel(flood.address) as chan:
        stub = tournament_pb2_grpc.TournamentServiceStub(chan)
        planned, tid = int(flood.extra["planned"]), flood.extra["tournament"]

        async def read(index: int) -> None:
            if index % 3 == 0:
                offset = random.randrange(max(1, planned - 5000))
                request = tpb.GetTournamentRequest(
                    tournament_id=tid, include_matches=True, matches_from=offset
                )
                await stub.GetTournament(request, timeout=60)
            elif index % 3 == 1:
                await stub.GetTournament(tpb.GetTournamentRequest(tournament_id=tid), timeout=60)
            else:
                await stub.ListTournaments(tpb.ListTournamentsRequest(page_size=100), timeout=60)

        await flood.loop(flood.args.readers, read)


async def relay(source: str, target: str) -> asyncio.Server:
    """A local listener whose connections reach ``target`` from the address ``source``: gRPC
    channels cannot bind their source, so each flooding address gets one of these."""
    host, port = target.rsplit(":", 1)

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up = await asyncio.open_connection(host, int(port), local_addr=(source, 0))
        except OSError:
            writer.close()
            return
        with contextlib.suppress(asyncio.CancelledError):  # the flood is over
            await asyncio.gather(pipe(reader, up[1]), pipe(up[0], writer))

    return await asyncio.start_server(accepted, "127.0.0.1", 0)


async def flood_spectators(flood: Flood) -> None:
    args = flood.args
    relays = [await relay(loopback(1, n), flood.address) for n in range(args.addresses)]
    chans = [channel(f"127.0.0.1:{r.sockets[0].getsockname()[1]}") for r in relays]
    stubs = [service_pb2_grpc.MatchServiceStub(c) for c in chans]
    open_now, watched = [0], dict[int, str]()

    async def watch(index: int) -> None:
        if watched.get(index) == flood.current.value.decode():
            await asyncio.sleep(0.2)  # it ended: wait for the victim's next match
        watched[index] = match_id = flood.current.value.decode()
        stub = stubs[index % len(stubs)]
        # The costliest streams: every place, the unbatched ones too (a message an event).
        # One stream in 40 asks for those (each waits for one of the match's 2), the rest
        # for batched places (told to ask for batches, an unbatched one asks again so).
        for batched in (False, True)[0 if index % 40 == 0 else 1 :]:
            request = spb.WatchMatchRequest(match_id=match_id, batched=batched)
            call = stub.WatchMatch(request)
            try:
                await call.read()  # the snapshot: the stream is open (or this raises, refused)
                break
            except grpc.aio.AioRpcError as error:
                if not batched and "batched" in (error.details() or ""):
                    continue
                await asyncio.sleep(1.0)  # refused: a patient flooder tries again a second later
                raise
        open_now[0] += 1
        flood.tally["open at most"] = max(flood.tally["open at most"], open_now[0])
        try:
            while await call.read() is not grpc.aio.EOF:
                pass
        finally:
            open_now[0] -= 1

    try:
        await flood.loop(args.addresses * args.streams, watch)
    finally:
        for chan in chans:
            await chan.close(None)


async def flood_ended(flood: Flood) -> None:
    async with channel(flood.address) as chan:
        stub = service_pb2_grpc.MatchServiceStub(chan)
        listed = spb.ListMatchesRequest(page_size=1000, status=spb.MATCH_STATUS_ENDED)
        page = await stub.ListMatches(listed, timeout=60)
        ended = [m.match_id for m in page.matches if m.last_seq > 10]  # played, not cancelled
        flood.tally["ended matches"] = len(ended)

        async def read(index: int) -> None:
            if index % 2 or not ended:
                await stub.ListMatches(spb.ListMatchesRequest(page_size=100), timeout=60)
            else:
                request = spb.GetMatchLogRequest(match_id=random.choice(ended))
                await stub.GetMatchLog(request, timeout=60)

        await flood.loop(flood.args.readers, read)


async def flood_bodies(flood: Flood) -> None:
    body = os.urandom(BIG)  # one 16 MiB message, sent whole whatever the answer

    async def send(index: int) -> str | None:
        if index % 2:
            await raw(body, timeout=60)
            return None
        reader, writer = await asyncio.open_connection("127.0.0.1", flood.web_port)
        writer.write(web_call(BIG))

        async def push() -> None:  # the whole body, while reading the answer, as a browser
            with contextlib.suppress(OSError):
                writer.write(body)
                await writer.drain()

        pushing = asyncio.create_task(push())
        try:
            async with asyncio.timeout(60):
                answer = await reader.read(4096)
        finally:
            pushing.cancel()
            writer.close()
        status = answer.partition(b"grpc-status:")[2][:2].strip().decode(errors="replace")
        return f"web grpc-status {status or 'none'}"

    async with channel(flood.address) as chan:
        raw: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = chan.unary_unary(LIST_GAMES)
        await flood.loop(16, send)


async def flood_idle(flood: Flood, port: int = 0) -> None:
    """Idle connections to the gateway (or to ``port``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, flood.args.idle + 256)), hard))

    async def hold(index: int) -> str:
        """One idle connection, held until the gateway closes it: how it ended."""
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port or flood.web_port, local_addr=(loopback(1, index), 0)
        )
        try:
            answer = await reader.read(64)
        except ConnectionResetError:
            answer = b""
        finally:
            writer.close()
        if answer.startswith(b"HTTP/1.1 503"):
            await asyncio.sleep(0.05)
            return "refused 503"
        return f"closed {answer[9:12].decode(errors='replace')}".strip()

    await flood.loop(flood.args.idle, hold)


async def flood_churn(flood: Flood) -> None:
    """The idle flood's connections against a listener of the flood's own, which answers each
    with the gateway's 503 and closes it: the server is not involved, so what the victim loses
    is what the connection churn itself costs this machine's kernel (loopback TCP on the
    flood's CPU), the floor of ``idle`` and ``bodies``."""

    async def busy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        writer.close()

    listener = await asyncio.start_server(busy, "127.0.0.1", 0, backlog=1024)
    async with listener:
        await flood_idle(flood, listener.sockets[0].getsockname()[1])


async def flood_burn(flood: Flood) -> None:
    """No request at all: a neighbour that only computes on the flood's CPU. What it costs the
    victim is the machine's own floor for every other flood (two vCPUs of a VM are seldom two
    whole cores), not the server's doing."""
    while not flood.stop.is_set():
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline:
            sum(range(1000))
        flood.tally["slices of 50 ms computed"] += 1
        await asyncio.sleep(0)


RUNNERS: dict[str, Callable[[Flood], Coroutine[Any, Any, None]]] = {
    "burn": flood_burn,
    "churn": flood_churn,
    "tournaments": flood_tournaments,
    "spectators": flood_spectators,
    "ended": flood_ended,
    "bodies": flood_bodies,
    "idle": flood_idle,
}


def flood_main(kind: str, flood: Flood, results: Any) -> None:
    """A flood process: run until told to stop, then send its tally back (a status's first
    message as a key whose count is 0)."""
    try:
        asyncio.run(RUNNERS[kind](flood))
        results.put({**flood.tally, **{f"{k}: {v}": 0 for k, v in flood.details.items()}})
    except BaseException as error:
        results.put({**flood.tally, f"fatal {type(error).__name__}: {error}"[:200]: 1})
        raise


def bot_host(address: str, matches: int, seconds: float, rate: float = 0.0) -> WorkerConfig:
    """The server benchmark's client process (``scripts/bench``): ``matches`` matches of four
    seats, one Play stream each, from one address; ``rate`` actions/s per match (0: at once)."""
    return WorkerConfig((address,), "durable", 0, matches, GAME, PLAYERS, seconds, 4, 64, 120,
                        "play", 29, rate, tidy=True)  # fmt: skip


# --- one window ------------------------------------------------------------------------------


@dataclass
class Window:
    """What one window measured (latencies sorted, in seconds; CPU in % of one core)."""

    flood: str
    latencies: list[float]
    refusals: Tally
    probes: list[float]
    rss_kb: tuple[int, int]  # at the start, at the peak
    cpu: tuple[float, ...]
    """The server's, its gateway's and the flooder's CPU; the server's event loop on a core and waiting for
    one (the kernel's schedstat): a loop runnable all the time is saturated."""
    flooder: Tally
    details: list[str]


async def window(kind: str, server: Server, args: argparse.Namespace, state: Any) -> Window:
    """Start flood ``kind`` (none for quiet), let it build up, measure, stop it."""
    ctx = multiprocessing.get_context("spawn")
    results, stop, barrier = ctx.Queue(), ctx.Event(), ctx.Barrier(2)
    process = None
    if kind == "bothost":
        play = args.ramp + args.seconds + 5
        config = bot_host(server.address, args.host_matches, play, args.host_rate)
        process = ctx.Process(target=worker_main, args=(config, barrier, results), daemon=True)
        process.start()
        pin(process.pid or 0, args.flood_cpus)
        for _ in range(4):  # created; streams opened; the play window begins
            await asyncio.to_thread(barrier.wait, 120)
    elif kind != "quiet":
        flood = Flood(server.address, server.web_port, args, state.current, stop)
        flood.extra = state.extra.get(kind, {})
        process = ctx.Process(target=flood_main, args=(kind, flood, results), daemon=True)
        process.start()
        pin(process.pid or 0, args.flood_cpus)
    # The server is its process and its gateway's (server/api/grpcweb/process.py): the
    # gateway's memory is the server's, and its CPU is shown beside the server's own.
    served = [server.process.pid, *gateways(server.process.pid)]
    pids = [*served[:2], *([process.pid] if process and process.pid else [])]
    rss_start = vm_rss_kb(served)
    await asyncio.sleep(args.ramp)
    start, cpu_start, rss = time.monotonic(), [cpu_seconds([pid]) for pid in pids], 0
    loop_start = loop_sched(pids[:1])
    while time.monotonic() < start + args.seconds:
        rss = max(rss, vm_rss_kb(served))
        await asyncio.sleep(0.25)
    end = time.monotonic()
    used = [cpu_seconds([pid]) - c for pid, c in zip(pids, cpu_start, strict=True)]
    used += [0.0] * (3 - len(used))
    used += [b - a for a, b in zip(loop_start, loop_sched(pids[:1]), strict=True)]
    stop.set()
    flooder: Tally = Counter()
    details: list[str] = []
    if process is not None:
        try:
            got = await asyncio.to_thread(results.get, True, 60)
        except queue.Empty:
            got = {"errors": {"no report": 1}} if kind == "bothost" else {"no report": 1}
        await asyncio.to_thread(process.join, 30)
        if kind == "bothost":  # the bench's stats: every error is a refusal
            flooder = Counter({**got.get("errors", {}), "actions": got.get("actions", 0)})
            flooder["matches set up"] = got.get("started", 0)
            flooder.update({got["fatal"][:100]: 1} if "fatal" in got else {})
        else:
            flooder = Counter({k: v for k, v in got.items() if v})
            details = [f"{kind}: {k}" for k, v in got.items() if not v]
        await asyncio.sleep(args.settle)  # calls the flood left queued are served meanwhile

    def within(timed: list[tuple[float, Any]]) -> list[Any]:
        return sorted(value for t, value in timed if start <= t < end)

    victim: Victim = state.victim
    latencies, probes = within(victim.latencies), within(victim.probes)
    refusals = Counter(within(victim.refusals))
    cpu = tuple(seconds * 100 / (end - start) for seconds in used)
    return Window(kind, latencies, refusals, probes, (rss_start, rss), cpu, flooder, details)


def gateways(pid: int) -> list[int]:
    """The gateway process of the server ``pid`` (none without ``--web``)."""
    return [
        child
        for child in children(pid)
        if b"grpcweb.process" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]


# --- the run and its table -----------------------------------------------------------------


@dataclass
class State:
    victim: Victim
    current: Any
    extra: dict[str, dict[str, str]] = field(default_factory=dict)


async def big_tournament(address: str) -> dict[str, str]:
    """A cancelled tournament of (about) the largest plan the server accepts."""
    async with ArenaClient(address) as client:
        entrants, secret = [Entrant(f"e{n}") for n in range(10)], new_secret()

        async def create(deals: int) -> tpb.TournamentInfo:
            calls = client.tournaments
            made = await calls.create(
                GAME, entrants, deals=deals, move_ms=1000, creator_secret=secret
            )
            cancel = tpb.CancelTournamentRequest(tournament_id=made.tournament.tournament_id)
            auth = (("authorization", f"Bearer {secret}"),)
            await calls.stub.CancelTournament(cancel, metadata=auth, timeout=60)
            # Its results are signed as it ends (seconds of a worker thread for 100,000
            # lines): part of setting up, not of the quiet window. A read waits for it.
            read = tpb.GetTournamentRequest(tournament_id=made.tournament.tournament_id)
            await calls.stub.GetTournament(read, timeout=120)
            return made.tournament

        per_deal = (await create(1)).planned
        info = await create(max(1, min(10_000, 100_000 // max(1, per_deal))))
        return {"tournament": info.tournament_id, "planned": str(info.planned)}


async def fill(server: Server, seconds: float) -> None:
    """Ended matches for the ``ended`` flood: a closed-loop load of 16 matches for a while."""
    ctx = multiprocessing.get_context("spawn")
    results, barrier = ctx.Queue(), ctx.Barrier(1)  # held until the child has read them
    config = bot_host(server.address, 16, seconds)
    process = ctx.Process(target=worker_main, args=(config, barrier, results))
    process.start()
    await asyncio.to_thread(results.get, True, seconds + 120)
    await asyncio.to_thread(process.join, 30)


async def run(args: argparse.Namespace, workdir: Path) -> list[Window]:
    with serving(workdir) as server:
        print(f"server {server.address}, gateway port {server.web_port}, in {workdir}")
        if args.flood_cpus:
            print(f"floods on CPU {sorted(args.flood_cpus)}; the server and the victim anywhere")
        current = multiprocessing.get_context("spawn").Array("c", 64)
        state = State(Victim(server.address, args.think / 1000, current), current)
        tasks = [state.victim.run(), state.victim.probe_browsers(server.web_port)]
        running = [asyncio.create_task(task) for task in tasks]
        try:
            if "tournaments" in args.floods:
                state.extra["tournaments"] = await big_tournament(server.address)
            if "ended" in args.floods:
                await fill(server, args.fill)
            print(HEADER, flush=True)
            windows: list[Window] = []
            for kind in ["quiet", *args.floods] * args.repeats:
                windows.append(await window(kind, server, args, state))
                quiet = [w for w in windows if w.flood == "quiet"][-1]  # this repeat's
                print(row(windows[-1], quiet), flush=True)
            return windows
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)


HEADER = (
    "| flood | victim actions | p50 ms | p99 ms | p99 ÷ quiet | server RSS MiB: peak (Δ quiet,"
    " rise in window) | CPU %: server, its gateway, flooder; server loop on a core, waiting"
    " | flooder: calls, outcomes | victim refused | browser probes: answered, p50 ms |"
    "\n|---|---|---|---|---|---|---|---|---|---|"
)


def ms(values: list[float], fraction: float) -> float:
    return percentile(values, fraction) * 1e3


def row(w: Window, quiet: Window) -> str:
    flooder = ", ".join(f"{k} {v:,}" for k, v in sorted(w.flooder.items())) or "–"
    refused = ", ".join(f"{k} {v}" for k, v in sorted(w.refusals.items())) or "0"
    ratio = ms(w.latencies, 0.99) / ms(quiet.latencies, 0.99)
    peak, over_quiet, rise = [
        (w.rss_kb[1] - base) / 1024 for base in (0, quiet.rss_kb[1], w.rss_kb[0])
    ]
    return (
        f"| {w.flood} | {len(w.latencies):,} | {ms(w.latencies, 0.5):.1f} "
        f"| {ms(w.latencies, 0.99):.1f} | {ratio:.2f} | {peak:.0f} ({over_quiet:+.0f}, {rise:+.0f}) "
        f"| {w.cpu[0]:.0f}, {w.cpu[1]:.0f}, {w.cpu[2]:.0f}; {w.cpu[3]:.0f}, {w.cpu[4]:.0f} "
        f"| {flooder} | {refused} "
        f"| {len(w.probes)}, {ms(w.probes, 0.5):.0f} |"
    )


def pooled(windows: list[Window]) -> dict[str, list[float]]:
    """Each kind of window's latencies over every repeat, sorted: a window's p99 is its ninth
    slowest action or so (about 870 actions in 20 s), which one stray stall moves by half;
    pooled over the repeats, the quiet p99 and each flood's rest on a few times as many."""
    kinds: dict[str, list[float]] = {}
    for w in windows:
        kinds.setdefault(w.flood, []).extend(w.latencies)
    return {kind: sorted(values) for kind, values in kinds.items()}


POOLED_HEADER = (
    "| flood (every repeat pooled) | victim actions | p50 ms | p99 ms | p99 ÷ quiet p99 |"
    "\n|---|---|---|---|---|"
)


def pooled_rows(kinds: dict[str, list[float]]) -> list[str]:
    quiet = ms(kinds["quiet"], 0.99)
    return [
        f"| {kind} | {len(values):,} | {ms(values, 0.5):.1f} | {ms(values, 0.99):.1f} "
        f"| {ms(values, 0.99) / quiet:.2f} |"
        for kind, values in kinds.items()
    ]


def missed(windows: list[Window], bound: float) -> list[str]:
    """Each flood's misses of the targets: p99 within 2x quiet (every repeat's actions
    pooled, :func:`pooled`), RSS within ``bound`` MiB of its repeat's quiet peak, no refusal
    of the victim (nor of the bot host) in any window."""
    kinds, misses = pooled(windows), []
    quiet_p99 = ms(kinds["quiet"], 0.99)
    for kind, values in kinds.items():
        ratio = ms(values, 0.99) / quiet_p99
        misses += [f"{kind}: p99 {ratio:.2f}x quiet"] if not ratio <= 2 else []
    quiet = windows[0]
    for w in windows[1:]:
        if w.flood == "quiet":
            quiet = w
            continue
        rise = (w.rss_kb[1] - quiet.rss_kb[1]) / 1024
        host = sum(v for k, v in w.flooder.items() if k not in ("matches set up", "actions"))
        why = [f"RSS +{rise:.0f} MiB"] if rise > bound else []
        why += [f"victim refused {sum(w.refusals.values())}"] if w.refusals else []
        why += [f"bot host refused {host}"] if w.flood == "bothost" and host else []
        misses += [f"{w.flood}: " + "; ".join(why)] if why else []
    return misses


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--floods", default=",".join(FLOODS), help="which, comma-separated, in this order")
    add("--seconds", type=float, default=10.0, help="measured seconds per window (10)")
    add("--ramp", type=float, default=3.0, help="seconds a flood builds up first (3)")
    add("--settle", type=float, default=3.0, help="seconds after a flood stops (3)")
    add("--repeats", type=int, default=1, help="run every window this many times (1)")
    add("--think", type=float, default=20.0, help="victim's ms before each action (20)")
    add("--readers", type=int, default=8, help="concurrent readers: tournaments, ended (8)")
    add("--addresses", type=int, default=40, help="loopback addresses of the spectators flood (40)")
    add("--streams", type=int, default=16, help="spectator streams per address (16)")
    add("--idle", type=int, default=1100, help="idle gateway connections (1100)")
    add("--host-matches", type=int, default=200, help="the bot host's matches (200)")
    add("--host-rate", type=float, default=1.0, help="its actions/s per match (1.0)")
    add("--fill", type=float, default=15.0, help="seconds of play to end matches first (15)")
    add("--rss-bound", type=float, default=128.0, help="MiB over quiet RSS allowed (128)")
    add("--keep", type=Path, help="keep the server's data and log in this directory")
    add("--pin", action=argparse.BooleanOptionalAction, default=True,
        help="the floods on the last CPU, so that a flooder's own work takes at most one"
        " (default on where there are 2 CPUs or more)")  # fmt: skip
    args = parser.parse_args(argv)
    args.flood_cpus = flood_cpus(args.pin)
    args.floods = [f for f in args.floods.split(",") if f]
    if set(args.floods) - set(FLOODS):
        parser.error(f"--floods: choose among {','.join(FLOODS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M")
    print(f"flood benchmark {started}, load {os.getloadavg()[0]:.1f}: {' '.join(sys.argv)}")
    with contextlib.ExitStack() as stack:
        workdir = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        workdir.mkdir(parents=True, exist_ok=True)
        windows = asyncio.run(run(args, workdir))
    for detail in (d for w in windows for d in w.details):
        print(f"first refusal, {detail}")
    print(POOLED_HEADER)
    print("\n".join(pooled_rows(pooled(windows))))
    misses = missed(windows, args.rss_bound)
    print("targets met under every flood" if not misses else "missed: " + " | ".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
