"""The load generator: one client process keeping ``slots`` matches in play.

Why: the load must come from processes other than the server's (``--client-procs`` of them),
each over ``--channels`` connections per server, and hold the concurrency at ``--matches`` for
the whole window: a slot whose match ends or fails starts the next one. The setup phases
(create and join, open the streams) are bounded by ``--setup-concurrency`` and synchronised
with the parent on a barrier, so the parent can read the servers' memory between them.

With several servers (replicas of one store) the clients reach them at random, as behind one
load-balanced address.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import random
import secrets
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from cardarena.engine.match import MatchSetup, setup
from cardarena.server.app import GRPC_OPTIONS, tune_collector
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc

from .bots import (
    UNARY_TIMEOUT,
    Divergence,
    MatchFailed,
    SeatBot,
    Stats,
    Table,
    WorkerConfig,
    failing_match,
)
from .pacing import Pacer
from .playbot import PlayBot

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub


class Worker:
    """One client process: ``slots`` concurrent matches over ``channels`` connections."""

    def __init__(self, config: WorkerConfig, prepared: MatchSetup) -> None:
        self.config = config
        self.prepared = prepared
        self.stats = Stats()
        self.apis: list[list[MatchServiceAsyncStub]] = []  # per server, ``channels`` each
        self.made = 0
        self.secret = secrets.token_hex(16)
        """The creator secret of its matches (``tidy``: it cancels them when it stops)."""
        self.tables: list[tuple[MatchServiceAsyncStub, str]] = []
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
        seed = b"" if cfg.pattern in ("turns", "play") else self.seed_for(slot)
        with failing_match(self.stats, "CreateMatch"):
            created = await api.CreateMatch(
                spb.CreateMatchRequest(
                    game=cfg.game,
                    players=cfg.players,
                    seed=seed,
                    creator_secret=self.secret if cfg.tidy else "",
                ),
                timeout=UNARY_TIMEOUT,
            )
        match_id = created.match.match_id
        if cfg.tidy:
            self.tables.append((api, match_id))

        async def join(seat: int) -> spb.JoinMatchResponse:
            request = spb.JoinMatchRequest(match_id=match_id, seat=seat, name=f"bench{seat}")
            return await seat_apis[seat].JoinMatch(request, timeout=UNARY_TIMEOUT)

        with failing_match(self.stats, "JoinMatch"):
            joined = await asyncio.gather(*(join(seat) for seat in range(cfg.players)))
        return Table(
            match_id,
            seed,
            [j.token for j in joined],
            [j.match.last_seq for j in joined],
            api,
            seat_apis,
            Pacer(1 / cfg.rate, self.spread) if cfg.rate else None,
        )

    async def open_streams(self, table: Table, slot: int) -> list[SeatBot]:
        """One stream per seat, each starting from the seq its join returned."""
        bot_class = PlayBot if self.config.pattern == "play" else SeatBot
        bots = [
            bot_class(
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

    async def cancel(self, api: MatchServiceAsyncStub, match_id: str) -> None:
        """Cancel a match it made, as a bot host that stops does (an ended one says so)."""
        request = spb.CancelMatchRequest(match_id=match_id, reason="the bot host stopped")
        with contextlib.suppress(grpc.aio.AioRpcError):
            await api.CancelMatch(
                request,
                metadata=(("authorization", f"Bearer {self.secret}"),),
                timeout=UNARY_TIMEOUT,
            )

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
            self.stats.fds = sum(1 for _ in Path("/proc/self/fd").iterdir())
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
            if cfg.tidy:
                await asyncio.gather(*(self.cancel(api, match_id) for api, match_id in self.tables))
        finally:
            for channel in (c for cs in channels for c in cs):
                await channel.close(None)
        return self.stats


def worker_main(config: WorkerConfig, barrier: Barrier, results: Queue[dict[str, Any]]) -> None:
    """Entry point of a client process: run, then send the stats back as a plain dict. Its
    collector is tuned as the servers' are, so that its own pauses weigh less on the latency
    it measures (equally for both servers)."""
    tune_collector()
    prepared = setup(config.game, players=config.players, options={})
    try:
        stats = asyncio.run(Worker(config, prepared).run(barrier))
        # asdict would rebuild the errors Counter from its items, keying it by (name, count)
        results.put({**dataclasses.asdict(stats), "errors": dict(stats.errors)})
    except BaseException as error:  # the parent must hear about it, whatever it was
        with contextlib.suppress(Exception):
            barrier.abort()
        results.put({"fatal": f"{type(error).__name__}: {error}"})
        raise
