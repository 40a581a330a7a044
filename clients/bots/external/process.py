"""An external program as a bot: JSON lines on its stdin and stdout (``docs/bot-protocol.md``).

Why one process per seat per match: the program then needs no notion of matches or seats in
parallel (it reads one game from start to end, like a person would), a crash or a hang costs
one seat of one match, and killing it never touches another game. Starting a process costs a
few tens of milliseconds, small beside a match.

Events are queued as the seat's stream delivers them and written just before the next turn
(or the end), so a program that is not asked is not woken either. The program's stderr goes
to a log file when the runner is given a folder for them, otherwise nowhere.

Why answers are matched to turns by id: a caller may give up on a turn (its time ran out and
it cancelled :meth:`ExternalDecider.decide`) and ask the next one of the same program, which
may still write its answer to the first. Each turn carries an ``id`` (1, 2, 3…) and its answer
echoes it (or, carrying none, answers the oldest turn not yet answered); an answer to an
earlier turn than the one asked is *late*: dropped and counted (:attr:`~ExternalDecider.late`),
never applied, and the answer to the turn asked is read on for within the caller's time.

Why a :class:`Program` apart from the decider: a program can be started before its match is
known (:mod:`.ahead`), since in a hosted tournament the server's clock runs from the moment the
match begins and a program's start-up is not a move. It is told ``hello`` as soon as it runs and
its first line read in the background (``{"hello": true}`` once it has loaded; a program of
protocol 1 or 2 says nothing until ``start``); the decider of the match it is given then sends
``start`` and reads its ``{"ready": true}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Final

from cardarena.v1 import game_pb2 as pb

from ..decider import BotGone, IllegalAnswer, SeatContext
from ..state import SeatState
from .protocol import (
    answer_id,
    end_message,
    entry_message,
    hello_message,
    is_hello,
    is_ready,
    parse_answer,
    start_message,
    turn_message,
)

EXIT_GRACE_S = 2.0
LINE_LIMIT = 1 << 20
LATE_NOTES_KEPT = 5
STARTUP_S: Final = 10.0
"""The start-up allowance: how long a program has to answer ``start`` with ``{"ready": true}``
(a runner that can wait, waits this long before the match is dealt; ``cardarena bot connect``
waits up to this long for programs it starts ahead to answer ``hello`` before it enters)."""


class Program:
    """One started program: its process, its log, the pipes, and its first line.

    Its first line is read in the background from the start (nothing else reads until it has
    come): ``{"hello": true}`` once it has loaded, or, from a program that ignores ``hello``
    (protocols 1 and 2), its answer to ``start``."""

    def __init__(self, process: asyncio.subprocess.Process, stderr: IO[bytes] | None) -> None:
        self.process = process
        self._stderr = stderr
        self.started = time.monotonic()
        self._first: asyncio.Task[bytes] = asyncio.create_task(self._read_line())
        self._first.add_done_callback(_retrieved)

    @classmethod
    async def launch(cls, command: Sequence[str], stderr_path: Path | None = None) -> Program:
        """Start ``command`` and tell it ``hello``; ``BotGone`` if it cannot be started."""
        stderr: IO[bytes] | None = None
        if stderr_path is not None:
            stderr_path.parent.mkdir(parents=True, exist_ok=True)
            stderr = stderr_path.open("ab")
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL,
                start_new_session=True,  # its own process group: a kill takes its children too
                limit=LINE_LIMIT,
            )
        except OSError as error:
            if stderr is not None:
                stderr.close()
            raise BotGone(f"cannot start {command[0]!r}: {error.strerror or error}") from None
        program = cls(process, stderr)
        with contextlib.suppress(BotGone):  # one that exits at once says so when it is read
            await program.send([hello_message()])
        return program

    @property
    def said_hello(self) -> bool:
        """Whether its first line has come and was ``{"hello": true}``."""
        first = self._first
        if not first.done() or first.cancelled() or first.exception() is not None:
            return False
        return is_hello(first.result())

    @property
    def running(self) -> bool:
        """Whether it still runs and its output is still open, as far as is known."""
        first = self._first
        failed = first.done() and (first.cancelled() or first.exception() is not None)
        return self.process.returncode is None and not failed

    async def up(self, within: float) -> bool:
        """Wait up to ``within`` seconds for its first line: whether it came (``hello``'s
        answer, or any line, which is then kept for ``start``). ``BotGone`` if it exited."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self.first_line()
        return self._first.done()

    async def first_line(self) -> bytes:
        """Its first line, once it comes (waiting for it is safe to cancel); ``BotGone`` if it
        exited, or was killed, first."""
        try:
            return await asyncio.shield(self._first)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._first.cancelled() and (current is None or not current.cancelling()):
                raise BotGone("the program was killed before it said anything") from None
            raise

    async def read_line(self) -> bytes:
        """Its next line after the first; ``BotGone`` if its output closed."""
        await self.first_line()
        return await self._read_line()

    async def send(self, messages: list[dict[str, Any]]) -> None:
        process = self.process
        assert process.stdin is not None
        data = "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in messages)
        try:
            process.stdin.write(data.encode())
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            code = await _exit_code(process)
            raise BotGone(f"the program stopped reading (exit code {code})") from None

    async def close(self, grace_s: float = EXIT_GRACE_S) -> None:
        """Close its input and give it ``grace_s`` to exit, then kill it; reap it."""
        process = self.process
        try:
            if process.stdin is not None:
                process.stdin.close()
            await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            pass
        finally:
            self.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), EXIT_GRACE_S)  # reap it

    def kill(self) -> None:
        """Kill it (and its process group) if it still runs; close its log."""
        process = self.process
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        if not self._first.done():
            self._first.cancel()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _read_line(self) -> bytes:
        process = self.process
        assert process.stdout is not None
        try:
            line = await process.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError):
            raise IllegalAnswer(f"a line longer than {LINE_LIMIT} bytes") from None
        if not line:
            code = await _exit_code(process)
            raise BotGone(f"the program closed its output (exit code {code})")
        return line


class ExternalDecider:
    """Drives one process for one seat of one match."""

    def __init__(self, command: Sequence[str], *, stderr_path: Path | None = None) -> None:
        self.command = list(command)
        self.stderr_path = stderr_path
        self._program: Program | None = None
        self._pending: list[dict[str, Any]] = []
        self._asked = 0
        """The id of the last turn written to the program (0: none yet)."""
        self._answered = 0
        """The id of the last turn an answer line was read for, on time or late."""
        self.late = 0
        """Answers read for a turn given up on before the turn then asked: dropped."""
        self.late_notes: list[str] = []
        """What the first few late answers were (``LATE_NOTES_KEPT``)."""

    def use(self, program: Program) -> None:
        """Play with ``program``, started ahead of the match with this decider's command and
        log, instead of starting one at :meth:`start`."""
        if self._program is not None:
            raise RuntimeError("this decider has a program already")
        self._program = program

    async def start(self, context: SeatContext) -> None:
        """Start the program (unless it was started ahead), send ``start`` and read its
        ``{"ready": true}`` (after its answer to ``hello``, if it gives one)."""
        if self._program is None:
            self._program = await Program.launch(self.command, self.stderr_path)
        program = self._program
        await program.send([start_message(context)])
        line = await program.first_line()
        if is_hello(line):
            line = await program.read_line()
        if not is_ready(line):
            raise BotGone(f'expected {{"ready": true}} after start, got {line[:80]!r}')

    def observe(self, event: pb.Event) -> None:
        message = entry_message(event)
        if message is not None:
            self._pending.append(message)

    async def decide(self, state: SeatState) -> int:
        """Write the turn and read its answer: late answers to earlier turns are dropped (and
        counted) on the way; an answer naming a later turn, which was never asked, is illegal.
        Cancelling this (the caller's time ran out) leaves the turn asked but unanswered."""
        program = self._running()
        self._asked += 1
        prompt = self._asked
        now_unix_ms = time.time_ns() // 1_000_000
        turn = turn_message(state, now_unix_ms, prompt=prompt)
        await program.send([*self._take_pending(), turn])
        while True:
            try:
                line = await program.read_line()
                echoed = answer_id(line)
            except (IllegalAnswer, ValueError) as error:
                self._answered = prompt  # the line was this turn's, and it was no answer
                raise IllegalAnswer(str(error)) from None
            answers = self._answered + 1 if echoed is None else echoed
            if answers < prompt:
                self._answered = max(self._answered, answers)
                self._count_late(answers, prompt, state.seq)
                continue
            self._answered = prompt
            if answers > prompt:
                raise IllegalAnswer(
                    f"the answer's id {answers} is not the turn's id {prompt}:"
                    f" no turn {answers} was asked"
                )
            try:
                return parse_answer(line, state.legal)
            except ValueError as error:
                raise IllegalAnswer(str(error)) from None

    async def finish(self, state: SeatState) -> None:
        program = self._program
        if program is None:
            return
        with contextlib.suppress(BotGone):
            await program.send([*self._take_pending(), end_message(state)])
        await program.close()

    def abandon(self) -> None:
        """Kill the program (and its process group) if it still runs; close its log."""
        if self._program is not None:
            self._program.kill()

    def _count_late(self, answers: int, prompt: int, seq: int) -> None:
        self.late += 1
        if len(self.late_notes) < LATE_NOTES_KEPT:
            self.late_notes.append(
                f"late at seq {seq}: an answer to turn {answers} came while turn {prompt} was"
                " asked; dropped"
            )

    def _take_pending(self) -> list[dict[str, Any]]:
        pending, self._pending = self._pending, []
        return pending

    def _running(self) -> Program:
        if self._program is None:
            raise BotGone("the program was never started")
        return self._program


def _retrieved(task: asyncio.Task[bytes]) -> None:
    """A first line nobody waited for (a program let go before its match): its error, if
    any, is not worth a warning."""
    if not task.cancelled():
        task.exception()


async def _exit_code(process: asyncio.subprocess.Process) -> int | str:
    try:
        return await asyncio.wait_for(process.wait(), 0.5)
    except TimeoutError:
        return "none: still running"
