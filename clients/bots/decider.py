"""A bot as a runner drives it: told the match, shown each event, asked to act, let go.

Why an interface beside :class:`~.base.Bot`: a tournament seat may be a Python object or an
external program (:mod:`.external`), and a runner must await either without ever running a
bot's thinking on its event loop. :class:`Decider` is that common shape; :class:`PythonDecider`
fits a Python bot to it, thinking in a daemon thread. What a misbehaving decider costs is the
runner's business (``cardarena.clients.tournament.guard``); here a decider only says what went
wrong: :class:`BotGone` (it can no longer be asked) or :class:`IllegalAnswer`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from cardarena.v1 import game_pb2 as pb
from cardarena.v1.clocks import TimeControl

from .base import Bot
from .state import SeatState


class BotGone(Exception):
    """The bot can no longer be asked (its program exited or closed its pipes)."""


class IllegalAnswer(Exception):
    """The bot answered something that is not one of the legal actions."""


@dataclass(frozen=True)
class SeatContext:
    """What a seat is told when its match starts."""

    match_id: str
    game: str
    seat: int
    players: int
    names: tuple[str, ...]
    options: dict[str, Any]
    lowest_wins: bool
    decision_ms: int
    """The per-move clock (0: none; the match may still have a bank or a round budget)."""
    time_control: TimeControl | None = None
    """The match's whole clock, where the runner knows it before the match begins."""


class Decider(Protocol):
    """One seat's bot as the runner drives it: told the match, shown events, asked to act."""

    async def start(self, context: SeatContext) -> None: ...
    def observe(self, event: pb.Event) -> None: ...
    async def decide(self, state: SeatState) -> int: ...
    async def finish(self, state: SeatState) -> None: ...
    def abandon(self) -> None: ...


class PythonDecider:
    """A Python :class:`Bot`, made fresh for the match, thinking in a daemon thread."""

    def __init__(self, factory: Callable[[], Bot]) -> None:
        self._factory = factory
        self._bot: Bot | None = None

    async def start(self, context: SeatContext) -> None:
        self._bot = self._factory()

    def observe(self, event: pb.Event) -> None:
        pass

    async def decide(self, state: SeatState) -> int:
        if self._bot is None:
            raise BotGone("the bot was never made")
        action: Any = await in_thread(self._bot.choose, state)
        if not isinstance(action, int) or isinstance(action, bool):
            raise IllegalAnswer(f"choose returned {action!r}, not an action id")
        return action

    async def finish(self, state: SeatState) -> None:
        self._bot = None

    def abandon(self) -> None:
        self._bot = None


class DaemonWorkers:
    """Daemon threads that each run one call at a time, then wait for the next.

    Why not a fresh thread per decision: starting one costs more than a random bot's whole
    decision (a profile of the tournament runner spent a third of its time starting threads).
    Why not ``concurrent.futures``: its pool joins its threads at exit, so one hung bot would
    hang the whole program after the tournament, and its fixed size would let a few hung bots
    starve every other seat. Here a call takes an idle thread if there is one and starts a new
    one if not, so a call that never returns holds only its own thread; up to ``keep_idle``
    threads wait for work, the rest end when they finish.
    """

    def __init__(self, keep_idle: int = 64) -> None:
        self._keep_idle = keep_idle
        self._calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        """Threads that have said they are waiting and have not yet been given a call: each
        call put on the queue is one fewer, so every queued call has a thread to take it."""

    @property
    def idle(self) -> int:
        """How many threads are waiting for a call."""
        with self._lock:
            return self._idle

    def run(self, call: Callable[[], None]) -> None:
        """Run ``call()`` (which must not raise) in one of the threads."""
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._calls.put(call)
                return
        threading.Thread(target=self._serve, args=(call,), name="bot-decision", daemon=True).start()

    def _serve(self, call: Callable[[], None]) -> None:
        while True:
            call()
            with self._lock:
                if self._idle >= self._keep_idle:
                    return
                self._idle += 1
            call = self._calls.get()

    def forget_threads(self) -> None:
        """In a forked child: its parent's threads are not there, so none is idle."""
        self._calls = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0


WORKERS = DaemonWorkers()
"""The threads every Python bot of this process thinks in."""
os.register_at_fork(after_in_child=WORKERS.forget_threads)


async def in_thread(function: Callable[[SeatState], Any], state: SeatState) -> Any:
    """Run ``function(state)`` in one of :data:`WORKERS`' daemon threads and await its result.

    The answer crosses back by :func:`asyncio.wrap_future`, which also copes with a caller
    that gave up (its future cancelled) or a loop closed before the thread is done."""
    answer: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def work() -> None:
        if not answer.set_running_or_notify_cancel():
            return  # cancelled before a thread took it: no need to think at all
        try:
            answer.set_result(function(state))
        except BaseException as raised:  # SystemExit from a bot is a crash too
            answer.set_exception(as_crash(raised))

    WORKERS.run(work)
    return await asyncio.wrap_future(answer)


def as_crash(raised: BaseException) -> Exception:
    """What a bot raised, as the plain exception its caller counts as a crash: anything that
    is no ``Exception`` (``SystemExit``), and a ``concurrent.futures.CancelledError``, which
    crossing back to the loop would become the caller's own cancellation, is wrapped."""
    if isinstance(raised, concurrent.futures.CancelledError) or not isinstance(raised, Exception):
        return RuntimeError(describe_error(raised))
    return raised


def describe_error(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
