"""The launcher: a tournament the server hosts, with this machine's bots as its entrants.

The server schedules and scores; this only creates the tournament, starts each bot as a
process of its own (``cardarena bot connect``: the entrant loop of :mod:`.entrant`) and
follows the standings. Why processes: a bot in the launcher's process could read its
rivals' state from memory or end everything with ``os._exit``; in its own process, with its
own resource limits and without the launcher's secrets in its environment, it can harm only
itself. The bots run in sessions of their own, so a Ctrl-C of the launcher leaves them (and
the tournament) playing: the launcher detaches, and ``--attach`` follows it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import resource
import secrets
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient, new_secret
from ..client.channel import RETRYABLE
from ..client.tournaments import creation
from .botspec import BotEntry
from .config import TournamentSettings

KEY_ENV = "CARDARENA_ENTRANT_KEY"
KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "SYSTEMROOT", "TMPDIR", "NODE_PATH")
"""What a bot's process inherits of the launcher's environment: nothing secret (no operator
token, no other entrant's key)."""
ENTRY_MS = 20_000
"""How long the first match waits for the launched bots to enter (each contributes to the
tournament seed); they all do within a second or two, a bot that fails to start is waited
for this long at most."""
ENTRANT_COMMAND = ("-c", "from cardarena.clients.cli import main; raise SystemExit(main())")


@dataclass(frozen=True)
class Limits:
    """What each bot process may use: CPU seconds over its life and address space (0: no
    limit)."""

    cpu_seconds: int = 0
    memory_mb: int = 4096


@dataclass(frozen=True, kw_only=True)
class HostedConfig(TournamentSettings):
    """A tournament the server hosts, this machine's bots launched as its entrants."""

    options: dict[str, object] | None = None
    move_ms: int = 10_000
    forfeit_after: int | None = 3
    seed: bytes = b""
    """Empty: the server draws the tournament's seed."""
    limits: Limits = Limits()
    template: tpb.CreateTournamentRequest | None = None
    """The whole request, as the command line's settings made it (every flag sets one field:
    ``cardarena.clients.cli.settings``), its entrants and secrets left to :func:`create`;
    ``None``: made from the fields above. Its seed must be ``seed``, which the bots' seeds
    derive from."""

    def request(self) -> tpb.CreateTournamentRequest:
        """A fresh copy of the request to send, without entrants or secrets yet."""
        if self.template is not None:
            request = tpb.CreateTournamentRequest()
            request.CopyFrom(self.template)
            return request
        return creation(
            self.game,
            [],
            players=self.players,
            options=self.options,
            deals=self.deals,
            move_ms=self.move_ms,
            concurrency=self.concurrency,
            forfeit_after=self.forfeit_after,
            seed=self.seed,
        )


def bots_seed(seed: bytes) -> bytes:
    """What the bots' seeds derive from, given the tournament's seed: one-way, so that
    nothing a bot is given says anything of the seed that deals the cards."""
    return hashlib.sha256(b"cardarena-bots-v1" + seed).digest()


def bot_environment(key: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
    env[KEY_ENV] = key
    return env


def apply_limits(limits: Limits) -> None:
    """Limit this process (a bot's, before it loads the bot): the limits hold for everything
    it starts too. Set by the child itself rather than between fork and exec, which a
    process with gRPC's threads must not do."""
    if limits.cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
    if limits.memory_mb:
        size = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))


def start_bot(
    address: str, tournament_id: str, key: str, entry: BotEntry, config: HostedConfig
) -> subprocess.Popen[bytes]:
    """``cardarena bot connect`` for one entrant, in a session and with limits of its own."""
    log = None
    exec_log: list[str] = []
    if config.bot_logs is not None:
        config.bot_logs.mkdir(parents=True, exist_ok=True)
        log = (config.bot_logs / f"{entry.name}.log").open("ab")
        exec_log = ["--bot-log", str(config.bot_logs / f"{entry.name}.exec.log")]
    try:
        return subprocess.Popen(
            [
                sys.executable,
                *ENTRANT_COMMAND,
                "bot",
                "connect",
                "--server",
                address,
                "--tournament",
                tournament_id,
                *exec_log,
                *(["--bot-seed", bots_seed(config.seed).hex()] if config.seed else []),
                "--cpu-seconds",
                str(config.limits.cpu_seconds),
                "--memory-mb",
                str(config.limits.memory_mb),
                entry.spec,
            ],
            env=bot_environment(key),
            stdin=subprocess.DEVNULL,
            stdout=log or subprocess.DEVNULL,
            stderr=log or subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        if log is not None:
            log.close()


@dataclass(frozen=True)
class Created:
    """A tournament created by the launcher: its id, the entrants' keys (drawn here, in bot
    order) and the creator secret that may cancel it."""

    tournament_id: str
    keys: list[str]
    creator_secret: str

    def __repr__(self) -> str:
        return f"Created(tournament_id={self.tournament_id!r}, keys=…, creator_secret=…)"


async def create(client: ArenaClient, config: HostedConfig) -> Created:
    """Create the tournament, with keys drawn here (one per bot) and a creator secret; a
    request id makes the client's retries find it rather than create a second one."""
    keys = [new_secret() for _ in config.bots]
    creator = new_secret()
    request = config.request()
    request.entrants.extend(
        tpb.EntrantSpec(name=bot.name, key=key) for bot, key in zip(config.bots, keys, strict=True)
    )
    request.creator_secret = creator
    request.request_id = secrets.token_hex(16)
    request.entry_ms = request.entry_ms or ENTRY_MS
    created = await client.tournaments.create_from(request)
    return Created(created.tournament.tournament_id, keys, creator)


async def follow(
    client: ArenaClient,
    tournament_id: str,
    on_update: Callable[[tpb.TournamentInfo], None],
) -> tpb.TournamentInfo:
    """Watch until the tournament ends (reconnecting while the server restarts)."""
    latest: tpb.TournamentInfo | None = None
    pause = 0.1
    while latest is None or latest.status != tpb.TOURNAMENT_STATUS_ENDED:
        try:
            async for info in client.tournaments.watch(tournament_id):
                latest, pause = info, 0.1
                on_update(info)
        except Exception as error:
            if not _retryable(error):
                raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)
    return latest


def _retryable(error: BaseException) -> bool:
    code = getattr(error, "code", None)
    return callable(code) and code() in RETRYABLE


def stop_bots(processes: Sequence[subprocess.Popen[bytes]], *, grace: float = 10.0) -> None:
    """Wait for the bots to leave (they do once the tournament ended), then end any left."""
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            process.wait()


class BotFailedToStart(Exception):
    """A bot's process could not be started: the tournament was cancelled."""


class Launch:
    """One launched tournament: created, its bots started, followed to its end.

    ``start`` creates the tournament and starts every bot (cancelling the tournament if one
    cannot start); ``follow`` watches it to the end, telling ``on_bot_stopped`` of a bot
    whose process ended with an error while it ran; ``stop_bots`` waits for them to leave.
    """

    def __init__(self, client: ArenaClient, config: HostedConfig) -> None:
        self.client = client
        self.config = config
        self.created: Created | None = None
        self.processes: list[subprocess.Popen[bytes]] = []

    @property
    def tournament_id(self) -> str:
        return self.created.tournament_id if self.created is not None else ""

    async def start(self) -> Created:
        config = self.config
        self.created = created = await create(self.client, config)
        try:
            for bot, key in zip(config.bots, created.keys, strict=True):
                self.processes.append(
                    start_bot(config.address, created.tournament_id, key, bot, config)
                )
        except OSError as error:
            await self.client.tournaments.cancel(
                created.tournament_id,
                reason=f"a bot could not start: {error}"[:200],
                secret=created.creator_secret,
            )
            stop_bots(self.processes, grace=0)
            raise BotFailedToStart(f"a bot could not start: {error}") from None
        return created

    async def follow(
        self,
        on_update: Callable[[tpb.TournamentInfo], None],
        on_bot_stopped: Callable[[BotEntry, int], None],
    ) -> tpb.TournamentInfo:
        watcher = asyncio.create_task(self._watch_bots(on_bot_stopped))
        try:
            return await follow(self.client, self.tournament_id, on_update)
        finally:
            watcher.cancel()

    async def _watch_bots(self, on_bot_stopped: Callable[[BotEntry, int], None]) -> None:
        told: set[int] = set()
        while len(told) < len(self.processes):
            await asyncio.sleep(0.5)
            for index, process in enumerate(self.processes):
                code = process.poll()
                if code is not None and index not in told:
                    told.add(index)
                    if code != 0:
                        on_bot_stopped(self.config.bots[index], code)

    async def stop_bots(self) -> None:
        await asyncio.to_thread(stop_bots, self.processes)
