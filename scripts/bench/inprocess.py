"""One tournament played by the in-process runner (``run_tournament``), what a run of either
tournament path measures (``TournamentRun``), and what both paths share: the fresh server each
run plays on and is measured by (``fresh_server``), the configuration of a run's bots
(``tournament_fields``), stopping a run's process (``stop``).

Why a module of its own: the in-process runner (``cardarena tournament --in-process``: one
channel, a task per match, each seat's bot asked through its guard, all in one process) and
the hosted path (``hosted.py``) are measured alike and reported side by side by
``tournament.py``; each path's process is its own concern.

The runner plays in a process of its own (spawned), one ``random`` bot per seat (``r0=random``,
``r1=random``, ...), against a fresh SQLite server. Actions come from the server's own counter
(``cardarena_actions_total``), server CPU from ``/proc``, the runner's CPU from its process
time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import multiprocessing
import queue
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardarena.clients import TournamentConfig, parse_bot, run_tournament

from .measure import cpu_seconds, scrape
from .procs import server_processes

if TYPE_CHECKING:
    from multiprocessing.context import SpawnContext
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue

NAN = float("nan")


@dataclasses.dataclass
class TournamentRun:
    """One tournament of either path: ``seconds`` from its start (for the hosted path: the
    CreateTournament call) to its end; ``client_cpu`` the runner's or launcher's process,
    ``bot_cpu`` the hosted path's bot processes (0 in process: the bots are the runner's)."""

    matches: int
    failed: int
    seconds: float
    actions: int
    server_cpu: float
    client_cpu: float
    first_error: str
    bot_cpu: float = 0.0
    start_seconds: float = NAN
    """Hosted: the launcher's ``start()`` (CreateTournament, then every bot's process spawned)."""
    connected_seconds: float = NAN
    """Hosted: from the create call until every bot process holds its connection."""
    left_seconds: float = NAN
    """Hosted: from the end until every bot process has exited (not in ``seconds``)."""
    faults: int = 0
    forfeits: int = 0
    bots_stopped: int = 0
    """Hosted: bot processes that ended with an error status while the tournament ran."""

    @property
    def matches_per_min(self) -> float:
        return self.matches / self.seconds * 60

    @property
    def actions_per_s(self) -> float:
        return self.actions / self.seconds

    @property
    def server_cpu_us_per_action(self) -> float:
        return self.server_cpu / max(self.actions, 1) * 1e6

    @property
    def client_cpu_us_per_action(self) -> float:
        return (self.client_cpu + self.bot_cpu) / max(self.actions, 1) * 1e6


def tournament_settings(args: argparse.Namespace, repeat: int) -> dict[str, Any]:
    """What both paths play in one repeat: the same game, players, deals, concurrency, seed."""
    return {
        "game": args.game,
        "players": args.players,
        "deals": args.tournament,
        "concurrency": args.concurrency,
        "seed": args.seed * 1000 + repeat,
        "timeout": tournament_timeout(args),
    }


def tournament_timeout(args: argparse.Namespace) -> float:
    """The bound on one tournament, either path (it ends the run with an error if passed)."""
    return float(args.setup_timeout + 3600)


def tournament_fields(address: str, args: dict[str, Any]) -> dict[str, Any]:
    """What either path's configuration is made of: the server, a random bot per seat, and
    the repeat's settings (:func:`tournament_settings`)."""
    return {
        "address": address,
        "game": args["game"],
        "bots": [parse_bot(f"r{seat}=random") for seat in range(args["players"])],
        "players": args["players"],
        "deals": args["deals"],
        "concurrency": args["concurrency"],
        "seed": args["seed"].to_bytes(32, "big"),
    }


def runner_main(
    address: str, args: dict[str, Any], results: Queue[dict[str, Any]]
) -> None:  # pragma: no cover - runs in the runner's process
    """The runner's process: one tournament of random bots; its outcome back as a dict."""
    try:
        config = TournamentConfig(**tournament_fields(address, args))
        cpu = time.process_time()
        result = asyncio.run(run_tournament(config))
        failed = result.failed
        results.put(
            {
                "matches": len(result.matches),
                "failed": len(failed),
                "seconds": result.seconds,
                "cpu": time.process_time() - cpu,
                "first_error": failed[0].error or "" if failed else "",
            }
        )
    except BaseException as error:
        results.put({"fatal": f"{type(error).__name__}: {error}"})
        raise


@dataclasses.dataclass
class FreshServer:
    """A fresh SQLite server for one tournament run, and what the run's process is given: a
    spawn context, a queue for its outcome, the repeat's settings. On leaving
    :func:`fresh_server`: the server's CPU seconds and its actions over the run."""

    address: str
    ctx: SpawnContext
    results: Queue[dict[str, Any]]
    settings: dict[str, Any]
    server_cpu: float = 0.0
    actions: int = 0


@contextlib.contextmanager
def fresh_server(args: argparse.Namespace, repeat: int, prefix: str) -> Iterator[FreshServer]:
    """Both paths' frame: the server, its counters and CPU read before and after the run."""
    with (
        tempfile.TemporaryDirectory(prefix=prefix) as tmp,
        server_processes("durable", Path(tmp), 0) as servers,
    ):
        server = servers[0]
        ctx = multiprocessing.get_context("spawn")
        fresh = FreshServer(server.address, ctx, ctx.Queue(), tournament_settings(args, repeat))
        before = scrape(servers)
        cpu = cpu_seconds([server.process.pid])
        yield fresh
        fresh.server_cpu = cpu_seconds([server.process.pid]) - cpu
        after = scrape(servers)
    if before["scraped"] != 1 or after["scraped"] != 1:
        raise RuntimeError("could not read the server's action counter (its metrics)")
    fresh.actions = after["actions"] - before["actions"]


def stop(process: BaseProcess) -> None:
    """A run's process, given 30 s to end after its outcome (or a failure), then killed."""
    process.join(30)
    if process.is_alive():
        process.kill()


def run_tournament_once(args: argparse.Namespace, repeat: int) -> TournamentRun:
    """A fresh SQLite server, one tournament against it in a process of its own."""
    with fresh_server(args, repeat, "bench-tournament-") as fresh:
        runner = fresh.ctx.Process(
            target=runner_main, args=(fresh.address, fresh.settings, fresh.results)
        )
        runner.start()
        try:
            outcome = fresh.results.get(timeout=fresh.settings["timeout"])
        except queue.Empty:
            raise RuntimeError("the tournament runner did not end within its bound") from None
        finally:
            stop(runner)
    if "fatal" in outcome:
        raise RuntimeError(f"the tournament runner failed: {outcome['fatal']}")
    return run_of(outcome, fresh)


def run_of(outcome: dict[str, Any], fresh: FreshServer, *more: str) -> TournamentRun:
    """A run from the outcome its process sent and the server's measures; ``more``: the
    names of further fields (the hosted path's), each as the outcome has it."""
    return TournamentRun(
        matches=outcome["matches"],
        failed=outcome["failed"],
        seconds=outcome["seconds"],
        actions=fresh.actions,
        server_cpu=fresh.server_cpu,
        client_cpu=outcome["cpu"],
        first_error=outcome["first_error"],
        **{name: outcome[name] for name in more},
    )
