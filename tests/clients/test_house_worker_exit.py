"""A house worker never outlives its server: every seat it plays ends once its stdin closes,
even a seat whose first cancellation was lost.

Why: CI once found a worker alive 10 s after its server was killed (`kill -9`), and here one
lived for minutes: its seat, retrying the dead server, was cancelled while gRPC set up a call,
whose set-up catches the cancellation and returns, so the seat went on retrying for its two
minutes. The worker now cancels again until every seat has ended, and asks Linux to end it
with its parent besides."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from cardarena.clients.house.worker import leave_all

from ..calls import run
from ..integration.test_house_bots import running


async def stubborn(swallowed: list[int]) -> None:
    """A seat whose first cancellation is lost, as one inside grpc.aio's call set-up."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        swallowed.append(1)
    await asyncio.sleep(3600)  # retrying a dead server, as it believes nothing happened


def test_a_seat_that_loses_its_cancellation_is_cancelled_again() -> None:
    async def scenario() -> None:
        swallowed: list[int] = []
        seats = {asyncio.create_task(stubborn(swallowed)) for _ in range(3)}
        await asyncio.sleep(0)
        await asyncio.wait_for(leave_all(set(seats)), 5)
        assert all(task.cancelled() for task in seats) and len(swallowed) == 3

    run(scenario(), 10)


def test_a_worker_whose_server_dies_dies_with_it() -> None:
    """A stand-in for the server, a shell that starts a worker that only makes its request
    and sleeps, is killed: the worker ends with it (it would sleep a minute otherwise)."""
    script = (
        f"{sys.executable} -c 'import time; from cardarena.clients.house.worker import"
        " die_with_parent; die_with_parent(); print(flush=True); time.sleep(60)' & echo $!;"
        " wait"
    )
    parent = subprocess.Popen(
        ["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    parent.stdout.readline()  # the worker made its request
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while running(worker):
        assert time.monotonic() < deadline, "the worker outlived its parent"
        time.sleep(0.05)
