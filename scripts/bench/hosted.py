"""One tournament hosted by the server, its bots started by the launcher, timed.

Why: since issue 12 a tournament is the server's (``TournamentService``: the server plans,
seats, clocks and scores every match) and ``cardarena tournament`` is only its launcher, which
starts every bot as its own ``cardarena bot connect`` process. What that path costs beside the
in-process runner (``inprocess.py``) and the server's ceiling is what ``tournament.py`` prints.

The launcher (``cardarena.clients.tournament.launcher.Launch``) runs in a process of its own
(spawned), against a fresh SQLite server, with one ``random`` entrant per seat (``r0=random``,
...: one lineup, every seed in every rotation, as the runner plays them), the launcher's
defaults otherwise (a 10 s move clock, forfeit after 3 faults). Timed in it:

* ``seconds``: from the CreateTournament call to the tournament's end as its watch reports it
  (the bots' own exit afterwards is not counted, it is reported apart);
* ``start_seconds``: the launcher's ``start()``, the create call and every bot's process spawned;
* ``connected_seconds``: from the create call until every bot process holds an established
  TCP connection to the server (found in ``/proc``: its socket inodes in ``/proc/net/tcp``),
  i.e. its interpreter started, the bot loaded and its ``Enter`` call under way. The server
  starts the first matches at once, so until then their clocks run with nobody to play.

CPU: the launcher's process time, and the bot processes' (``RUSAGE_CHILDREN`` of the launcher,
which waits for each of them), the server's from ``/proc``; actions from the server's counter.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import queue
import resource
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardarena.clients import ArenaClient
from cardarena.clients.tournament.launcher import HostedConfig, Launch
from cardarena.v1 import tournament_pb2 as tpb

from .inprocess import TournamentRun, fresh_server, run_of, stop, tournament_fields

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

CONNECT_POLL_S = 0.02


def established_inodes(port: int) -> set[str]:
    """Socket inodes of the machine's established TCP connections to ``port`` (any host)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port:
                    inodes.add(fields[9])
    return inodes


def holds_connection(pid: int, inodes: set[str]) -> bool:
    """Whether process ``pid`` has one of the sockets ``inodes`` open."""
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                link = str(fd.readlink())
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return True
    return False


async def all_connected(pids: Sequence[int], port: int, began: float) -> float:
    """Seconds from ``began`` until every process of ``pids`` is connected to ``port``."""
    waiting = set(pids)
    while waiting:
        inodes = established_inodes(port)
        waiting = {pid for pid in waiting if not holds_connection(pid, inodes)}
        if waiting:
            await asyncio.sleep(CONNECT_POLL_S)
    return time.monotonic() - began


async def launch_and_follow(
    address: str, args: dict[str, Any], results: Queue[dict[str, Any]]
) -> dict[str, Any]:
    """Create the tournament, start the bots, follow it to the end; the timings."""
    config = HostedConfig(**tournament_fields(address, args))
    port = int(address.rsplit(":", 1)[1])
    stopped: list[tuple[str, int]] = []
    async with ArenaClient(address) as client:
        launch = Launch(client, config)
        began = time.monotonic()
        created = await launch.start()
        start_seconds = time.monotonic() - began
        results.put({"bots": [p.pid for p in launch.processes]})
        connected = asyncio.create_task(
            all_connected([p.pid for p in launch.processes], port, began)
        )
        try:
            info = await asyncio.wait_for(
                launch.follow(lambda _: None, lambda bot, code: stopped.append((bot.name, code))),
                timeout=args["timeout"],
            )
        except TimeoutError:
            await client.tournaments.cancel(
                created.tournament_id, reason="the benchmark's bound", secret=created.creator_secret
            )
            raise
        finally:
            connected.cancel()
        seconds = time.monotonic() - began
        await launch.stop_bots()
        left = time.monotonic() - began - seconds
    return {
        "matches": info.finished,
        "failed": info.failed,
        "seconds": seconds,
        "start_seconds": start_seconds,
        "connected_seconds": connected.result() if not connected.cancelled() else float("nan"),
        "left_seconds": left,
        "faults": sum(s.faults for s in info.standings),
        "forfeits": sum(s.forfeits for s in info.standings),
        "bots_stopped": len(stopped),
        "first_error": ""
        if info.status == tpb.TOURNAMENT_STATUS_ENDED and not info.failed
        else info.end_reason,
    }


def launcher_main(
    address: str, args: dict[str, Any], results: Queue[dict[str, Any]]
) -> None:  # pragma: no cover - runs in the launcher's process
    """The launcher's process: one hosted tournament; its bots' pids, then its outcome."""
    try:
        cpu = time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        outcome = asyncio.run(launch_and_follow(address, args, results))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        outcome["cpu"] = time.process_time() - cpu
        outcome["bot_cpu"] = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        results.put(outcome)
    except BaseException as error:
        results.put({"fatal": f"{type(error).__name__}: {error}"})
        raise


def kill_bots(pids: Sequence[int]) -> None:
    """The bots of a launcher that did not end cleanly (each leads a session of its own)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def run_hosted_once(args: argparse.Namespace, repeat: int) -> TournamentRun:
    """A fresh SQLite server, one hosted tournament on it, launched from a process of its own."""
    with fresh_server(args, repeat, "bench-hosted-") as fresh:
        launcher = fresh.ctx.Process(
            target=launcher_main, args=(fresh.address, fresh.settings, fresh.results)
        )
        launcher.start()
        bots: list[int] = []
        outcome: dict[str, Any] = {}
        deadline = time.monotonic() + fresh.settings["timeout"] + 60
        try:
            while not outcome:
                message = fresh.results.get(timeout=max(0.0, deadline - time.monotonic()))
                if "bots" in message:
                    bots = message["bots"]
                else:
                    outcome = message
        except queue.Empty:
            raise RuntimeError("the hosted tournament did not end within its bound") from None
        finally:
            stop(launcher)
            if "fatal" in outcome or not outcome:
                kill_bots(bots)
    if "fatal" in outcome:
        raise RuntimeError(f"the hosted tournament's launcher failed: {outcome['fatal']}")
    return run_of(
        outcome,
        fresh,
        "bot_cpu",
        "start_seconds",
        "connected_seconds",
        "left_seconds",
        "faults",
        "forfeits",
        "bots_stopped",
    )
