"""Programs started ahead of their matches, so that their start-up costs no move.

Why: in a hosted tournament the server's move clock runs from the moment a match begins, which
is when an entrant is told of it, so a program started then is still starting (an interpreter,
imports, a model to load) while its first turn's time runs out. An entrant therefore keeps
programs started before it knows their matches (one per match it may be given at once, up to
:data:`MAX_AHEAD`): each has been told ``hello``, and a match takes the one started longest ago
(:meth:`Ahead.hand`) while another is started in its place. Before it first enters, the entrant
waits for them to answer ``hello`` (:meth:`Ahead.up`).

A program is still one match's: a program started ahead is sent ``start`` once, for the match
it is handed to, and ends with it (``docs/bot-protocol.md``, "Start-up is not a move").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..decider import BotGone
from .process import ExternalDecider, Program

MAX_AHEAD: Final = 8
"""The most programs kept started ahead (each may hold a loaded model in memory)."""
LAUNCH_WAIT_S: Final = 5.0
"""How long letting go waits for programs being started (a spawn takes milliseconds)."""


@dataclass(frozen=True)
class Warmth:
    """What the programs started ahead did within the wait: how many there were, how many
    answered ``hello``, how many said something else first, and why any could not run."""

    programs: int
    hello: int
    other: int
    failures: tuple[str, ...] = field(default=())

    @property
    def silent(self) -> int:
        """Running, but not a word yet: still starting, or of protocol 1 or 2."""
        return self.programs - self.hello - self.other - len(self.failures)


class Ahead:
    """Programs of one command (and log) started before their matches: ``keep`` of them at a
    time, never more than ``limit`` in all (the matches that may still come)."""

    def __init__(
        self, command: Sequence[str], *, stderr_path: Path | None, keep: int, limit: int
    ) -> None:
        self.command = list(command)
        self.stderr_path = stderr_path
        self.keep = keep
        self.limit = limit
        self.handed = 0
        """How many matches were handed a program started ahead."""
        self._spares: list[Program] = []
        self._launching: set[asyncio.Task[None]] = set()
        self._failures: list[str] = []
        self._closed = False

    def fill(self) -> None:
        """Start programs until ``keep`` are started or starting (at most ``limit``)."""
        while not self._closed and len(self._spares) + len(self._launching) < min(
            self.keep, self.limit
        ):
            task = asyncio.create_task(self._launch())
            self._launching.add(task)
            task.add_done_callback(self._launching.discard)

    async def up(self, within: float) -> Warmth:
        """Wait up to ``within`` seconds for every program started ahead to say something
        (``{"hello": true}``, once it has loaded)."""
        if self._launching:
            await asyncio.wait(set(self._launching))
        spares = list(self._spares)
        said = await asyncio.gather(*(p.up(within) for p in spares), return_exceptions=True)
        failures = [*self._failures, *(str(s) for s in said if isinstance(s, BaseException))]
        return Warmth(
            programs=len(spares) + len(self._failures),
            hello=sum(p.said_hello for p in spares),
            other=sum(s is True and not p.said_hello for p, s in zip(spares, said, strict=True)),
            failures=tuple(failures),
        )

    def hand(self, decider: ExternalDecider) -> bool:
        """Give ``decider`` the program started longest ago, if one runs with its command and
        log, and start another in its place; whether it was given one."""
        if decider.command != self.command or decider.stderr_path != self.stderr_path:
            return False
        self.limit = max(0, self.limit - 1)
        handed = False
        while self._spares and not handed:
            program = self._spares.pop(0)
            if program.running:
                decider.use(program)
                handed = True
                self.handed += 1
            else:  # it exited while waiting: its match starts one of its own
                program.kill()
        self.fill()
        return handed

    async def close(self) -> None:
        """Let every program still waiting go (they were never sent ``start``)."""
        self._closed = True
        if self._launching:  # a spawn is quick; one cut short could leave a process behind
            await asyncio.wait(set(self._launching), timeout=LAUNCH_WAIT_S)
        spares, self._spares = self._spares, []
        for program in spares:
            program.kill()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(p.close(0) for p in spares), return_exceptions=True)

    async def _launch(self) -> None:
        try:
            program = await Program.launch(self.command, self.stderr_path)
        except BotGone as error:
            self._failures.append(str(error))
            return
        if self._closed:
            program.kill()
            await program.close(0)
        else:
            self._spares.append(program)
