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
from typing import IO, Any

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from ..decider import BotGone, IllegalAnswer, SeatContext
from ..state import SeatState
from .protocol import (
    answer_id,
    end_message,
    event_message,
    parse_answer,
    start_message,
    timed_out_message,
    turn_message,
)

EXIT_GRACE_S = 2.0
LINE_LIMIT = 1 << 20
LATE_NOTES_KEPT = 5


class ExternalDecider:
    """Drives one process for one seat of one match."""

    def __init__(self, command: Sequence[str], *, stderr_path: Path | None = None) -> None:
        self.command = list(command)
        self.stderr_path = stderr_path
        self._process: asyncio.subprocess.Process | None = None
        self._stderr: IO[bytes] | None = None
        self._pending: list[dict[str, Any]] = []
        self._asked = 0
        """The id of the last turn written to the program (0: none yet)."""
        self._answered = 0
        """The id of the last turn an answer line was read for, on time or late."""
        self.late = 0
        """Answers read for a turn given up on before the turn then asked: dropped."""
        self.late_notes: list[str] = []
        """What the first few late answers were (``LATE_NOTES_KEPT``)."""

    async def start(self, context: SeatContext) -> None:
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            self._stderr = self.stderr_path.open("ab")
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=self._stderr if self._stderr is not None else asyncio.subprocess.DEVNULL,
                start_new_session=True,  # its own process group: a kill takes its children too
                limit=LINE_LIMIT,
            )
        except OSError as error:
            raise BotGone(f"cannot start {self.command[0]!r}: {error.strerror or error}") from None
        await self._send([start_message(context)])
        line = await self._read_line()
        try:
            ready = json.loads(line)
        except ValueError:
            ready = None
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            raise BotGone(f'expected {{"ready": true}} after start, got {line[:80]!r}')

    def observe(self, event: pb.Event) -> None:
        if event.WhichOneof("kind") == "timed_out":
            self._pending.append(timed_out_message(event.seq, event.timed_out.seat))
            return
        decoded = codec.event_from_pb(event)
        if decoded is not None:
            self._pending.append(event_message(event.seq, decoded))

    async def decide(self, state: SeatState) -> int:
        """Write the turn and read its answer: late answers to earlier turns are dropped (and
        counted) on the way; an answer naming a later turn, which was never asked, is illegal.
        Cancelling this (the caller's time ran out) leaves the turn asked but unanswered."""
        self._asked += 1
        prompt = self._asked
        now_unix_ms = time.time_ns() // 1_000_000
        turn = turn_message(state, now_unix_ms, prompt=prompt)
        await self._send([*self._take_pending(), turn])
        while True:
            try:
                line = await self._read_line()
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
        process = self._process
        if process is None:
            return
        try:
            with contextlib.suppress(BotGone):
                await self._send([*self._take_pending(), end_message(state)])
            if process.stdin is not None:
                process.stdin.close()
            await asyncio.wait_for(process.wait(), EXIT_GRACE_S)
        except TimeoutError:
            pass
        finally:
            self.abandon()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), EXIT_GRACE_S)  # reap it

    def abandon(self) -> None:
        """Kill the program (and its process group) if it still runs; close its log."""
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

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

    def _running(self) -> asyncio.subprocess.Process:
        if self._process is None:
            raise BotGone("the program was never started")
        return self._process

    async def _read_line(self) -> bytes:
        process = self._running()
        assert process.stdout is not None
        try:
            line = await process.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError):
            raise IllegalAnswer(f"a line longer than {LINE_LIMIT} bytes") from None
        if not line:
            code = await _exit_code(process)
            raise BotGone(f"the program closed its output (exit code {code})")
        return line

    async def _send(self, messages: list[dict[str, Any]]) -> None:
        process = self._running()
        assert process.stdin is not None
        data = "".join(json.dumps(m, separators=(",", ":")) + "\n" for m in messages)
        try:
            process.stdin.write(data.encode())
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            code = await _exit_code(process)
            raise BotGone(f"the program stopped reading (exit code {code})") from None


async def _exit_code(process: asyncio.subprocess.Process) -> int | str:
    try:
        return await asyncio.wait_for(process.wait(), 0.5)
    except TimeoutError:
        return "none: still running"
