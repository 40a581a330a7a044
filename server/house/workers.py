"""The worker processes that play the house seats, and the pipes the server talks to them on.

Why processes: a bot's thinking (a Monte Carlo search most of all) is CPU work, and the
server's event loop must never wait for it. Each worker is the clients' program
``python -m cardarena.clients.house`` (the reference bots live with the clients, which the
server never imports): it connects back to this server as a client and plays each seat it is
given on an ordinary ``Play`` call with the seat's token, so what it sees is what the seat may
see and what it does goes through every check a player's action goes through.

The pipe speaks JSON lines. The server writes ``{"play": {match, seat, token, bot,
budget_ms}}`` and ``{"leave": {match, seat}}``; the worker writes ``{"ready": true}`` once it
is up and ``{"done": {match, seat, error}}`` when it stops playing a seat (the match ended, or
it could not go on). Tokens travel only on the pipe, never on a command line. A worker whose
stdin closes (this server stopped or died) leaves every seat and exits.

A worker that exits while the server runs is the host's fault, never a seat's: it is started
again at once (after a pause that grows while it keeps dying), and its seats are handed out
again; each takes its match up from its stream's start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any, Final, Protocol

import structlog

from ..hosting.completion import cancel_and_wait, end_child

log = structlog.get_logger(__name__)

Key = tuple[str, int]
"""A house seat: (match id, seat)."""

WORKER: Final = ("-m", "cardarena.clients.house")
READY_SECONDS: Final = 30.0
"""How long a new worker may take to say it is ready (its imports, its channel)."""
STOP_SECONDS: Final = 3.0
"""How long a worker asked to stop (its stdin closed) may take before it is killed."""
RESTART_PAUSES: Final = (0.0, 0.5, 2.0, 5.0, 15.0, 30.0)
"""Pauses before restarting a worker that died, the next one each time it dies again soon."""
STEADY_SECONDS: Final = 60.0
"""A worker that lived this long died of something new: its next restart is immediate."""
LINE_LIMIT: Final = 1 << 20
"""The longest line a worker may write (a longer one ends it: it is not ours)."""


class Calls(Protocol):
    """What the workers tell whoever hands out the seats."""

    def ready(self) -> None:
        """A worker is (again) ready for seats."""

    def done(self, key: Key, error: str | None) -> None:
        """A worker stopped playing a seat: its match ended (``error`` ``None``) or it could
        not go on (the error, in words)."""

    def lost(self, keys: set[Key]) -> None:
        """A worker died with these seats: hand them out again."""


class Worker:
    """One worker process: the seats it plays, and the pipe to it."""

    def __init__(
        self,
        index: int,
        address: str,
        calls: Calls,
    ) -> None:
        self.index = index
        self.address = address
        self.seats: set[Key] = set()
        """The house seats it was told to play and has not finished."""
        self.ready = False
        self._calls = calls
        self._process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        self._deaths = 0
        self._started_at = 0.0
        self.log = log.bind(worker=index)

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def start(self) -> None:
        """Start the process and wait until it says it is ready; restarted whenever it dies."""
        loop = asyncio.get_running_loop()
        self._started_at = loop.time()
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            *WORKER,
            "--server",
            self.address,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
        )
        process = self._process
        assert process.stdout is not None and process.stderr is not None
        self._tasks = [
            asyncio.create_task(self._read(process.stdout)),
            asyncio.create_task(self._relay(process.stderr)),
            asyncio.create_task(self._watch(process)),
        ]
        self.log.info("house_worker_started", pid=process.pid)

    def send(self, message: dict[str, Any]) -> bool:
        """Write one line to the worker; ``False`` if it is not there to read it."""
        process = self._process
        if not self.ready or process is None or process.stdin is None:
            return False
        if process.stdin.is_closing():
            return False
        process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        return True

    async def stop(self) -> None:
        """Ask the worker to leave every seat and exit (its stdin closed); kill it if it does
        not within :data:`STOP_SECONDS`."""
        self._stopping = True
        if self._process is not None:
            await end_child(self._process, STOP_SECONDS)
        for task in self._tasks:
            await cancel_and_wait(task)
        self.seats.clear()
        self.ready = False

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        """The worker's lines: ``ready``, then a ``done`` per seat it stops playing."""
        while True:
            try:
                line = await stdout.readline()
            except ValueError:  # a line past the limit: not our worker speaking
                self.log.error("house_worker_garbled")
                self.kill()
                return
            if not line:
                return
            try:
                message = json.loads(line)
                done = message.get("done")
                key = (str(done["match"]), int(done["seat"])) if done is not None else None
            except (ValueError, TypeError, KeyError, AttributeError):
                self.log.warning("house_worker_said", line=line[:200].decode(errors="replace"))
                continue
            if message.get("ready") is True:
                self.ready = True
                self.log.info("house_worker_ready", pid=self.pid)
                self._calls.ready()
            if key is not None:
                self.seats.discard(key)
                error = done.get("error")
                self._calls.done(key, None if error is None else str(error)[:500])

    async def _relay(self, stderr: asyncio.StreamReader) -> None:
        """What the worker writes on stderr (a traceback, say) goes to the server's log."""
        while True:
            try:
                line = await stderr.readline()
            except ValueError:
                continue
            if not line:
                return
            text = line.decode(errors="replace").rstrip()
            if text:
                self.log.warning("house_worker_stderr", line=text[:500])

    def kill(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        """Wait for the process to end; unless asked to stop, start it again."""
        code = await process.wait()
        self.ready = False
        if self._stopping:
            return
        loop = asyncio.get_running_loop()
        lived = loop.time() - self._started_at
        self._deaths = 1 if lived >= STEADY_SECONDS else self._deaths + 1
        pause = RESTART_PAUSES[min(self._deaths - 1, len(RESTART_PAUSES) - 1)]
        self.log.error(
            "house_worker_died", pid=process.pid, exit_code=code, seats=len(self.seats),
            restart_in_s=pause,
        )  # fmt: skip
        lost, self.seats = self.seats, set()
        self._calls.lost(lost)
        await asyncio.sleep(pause)
        if not self._stopping:
            try:
                await self.start()
            except OSError as error:
                self.log.error("house_worker_not_started", error=str(error))


class Workers:
    """A fixed number of worker processes, each playing at most ``per_worker`` seats."""

    def __init__(self, count: int, per_worker: int, calls: Calls) -> None:
        self.count = count
        self.per_worker = per_worker
        self._calls = calls
        self.workers: list[Worker] = []

    async def start(self, address: str) -> None:
        """Start every worker, reaching this server at ``address``; ready moments later."""
        self.workers = [Worker(i, address, self._calls) for i in range(self.count)]
        for worker in self.workers:
            await worker.start()
        await self.wait_ready(READY_SECONDS)

    async def wait_ready(self, seconds: float) -> bool:
        """Wait (at most ``seconds``) until every worker is ready: a server says it listens
        once its house can play, so the first match's house seats are not left to the clock
        while the workers load."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not all(worker.ready for worker in self.workers):
            if loop.time() > deadline:
                log.warning("house_workers_not_ready", seconds=seconds)
                return False
            await asyncio.sleep(0.02)
        return True

    def place(self, key: Key, order: dict[str, Any]) -> Worker | None:
        """Hand a seat to the ready worker with the fewest seats and room for one more;
        ``None`` if none has (the seat waits for the next round of handing out)."""
        ready = [w for w in self.workers if w.ready and len(w.seats) < self.per_worker]
        if not ready:
            return None
        worker = min(ready, key=lambda w: len(w.seats))
        if not worker.send({"play": order}):
            return None
        worker.seats.add(key)
        return worker

    def holder(self, key: Key) -> Worker | None:
        return next((w for w in self.workers if key in w.seats), None)

    def leave(self, key: Key) -> None:
        """Tell whoever plays a seat to stop (its match ended, or moved to another replica)."""
        worker = self.holder(key)
        if worker is not None:
            worker.seats.discard(key)
            worker.send({"leave": {"match": key[0], "seat": key[1]}})

    async def stop(self) -> None:
        await asyncio.gather(*(worker.stop() for worker in self.workers))
