"""The threads Python bots think in (``bots.decider.DaemonWorkers``): reused while they are
idle, never shared with a call that has not returned, never waited for at exit."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from cardarena.clients.bots.decider import DaemonWorkers, in_thread
from cardarena.clients.bots.state import SeatState
from tests.helpers import run_python
from tests.waiting import wait_until

WAIT = 10.0
STATE = SeatState("m1", 0)


def printed(program: str, cwd: Path) -> str:
    """What ``python -c program`` printed, once it has exited with status 0."""
    done = run_python("-c", program, cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def ran_in(workers: DaemonWorkers) -> threading.Thread:
    """The thread one quick call ran in, once it has returned."""
    done = threading.Event()
    where: list[threading.Thread] = []

    def call() -> None:
        where.append(threading.current_thread())
        done.set()

    workers.run(call)
    assert done.wait(WAIT)
    return where[0]


def test_an_idle_thread_takes_the_next_call() -> None:
    workers = DaemonWorkers()
    first = ran_in(workers)
    for _ in range(20):
        wait_until(lambda: workers.idle == 1, what="the thread to say it is idle")
        assert ran_in(workers) is first
    assert first.daemon and first.name == "bot-decision"


class Held:
    """A call that notes each thread it runs in, then waits there until released."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.release = threading.Event()

    def __call__(self) -> None:
        self.threads.append(threading.current_thread())
        self.release.wait()


def test_a_call_that_never_returns_holds_only_its_own_thread() -> None:
    workers, hung = DaemonWorkers(), Held()
    workers.run(hung)
    wait_until(lambda: hung.threads, what="the hanging call to start")
    others = {ran_in(workers) for _ in range(5)}
    assert hung.threads[0] not in others and all(t.is_alive() for t in others)
    hung.release.set()


def test_threads_beyond_the_idle_bound_end_when_they_finish() -> None:
    workers, held = DaemonWorkers(keep_idle=1), Held()
    for _ in range(3):
        workers.run(held)  # none is idle: three threads
    wait_until(lambda: len(held.threads) == 3, what="three calls running")
    assert len(set(held.threads)) == 3
    held.release.set()
    wait_until(
        lambda: sum(not t.is_alive() for t in held.threads) == 2,
        what="two of the three threads to end",
    )
    assert ran_in(workers) in held.threads  # the one kept idle takes the next call


def test_a_bot_that_never_returns_does_not_keep_the_program_from_ending(tmp_path: Path) -> None:
    program = (
        "import asyncio, threading\n"
        "from cardarena.clients.bots.decider import in_thread\n"
        "async def main():\n"
        "    hung = asyncio.ensure_future(in_thread(lambda state: threading.Event().wait(), None))\n"
        "    print(await in_thread(lambda state: 'answered', None), flush=True)\n"
        "    hung.cancel()\n"
        "asyncio.run(main())\n"
    )
    assert printed(program, tmp_path) == "answered"


def test_a_decision_runs_off_the_event_loop_and_its_error_reaches_the_caller() -> None:
    async def scenario() -> None:
        loop_thread = threading.current_thread()
        assert await in_thread(lambda state: threading.current_thread() is not loop_thread, STATE)

        def crashes(state: SeatState) -> int:
            raise SystemExit(3)

        try:
            await in_thread(crashes, STATE)
        except RuntimeError as error:
            assert str(error) == "SystemExit: 3"
        else:
            raise AssertionError("the bot's exit was not reported")

    asyncio.run(scenario())


def test_a_forked_child_starts_threads_of_its_own(tmp_path: Path) -> None:
    program = (
        "import os, threading, time\n"
        "from cardarena.clients.bots.decider import WORKERS\n"
        "done = threading.Event()\n"
        "WORKERS.run(done.set); done.wait(10)\n"
        "while WORKERS.idle != 1: time.sleep(0.01)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    answered = threading.Event()\n"
        "    WORKERS.run(answered.set)\n"
        "    os._exit(0 if answered.wait(10) else 1)\n"
        "print(os.waitpid(pid, 0)[1] >> 8, flush=True)\n"
    )
    assert printed(program, tmp_path) == "0"  # the child's exit status
