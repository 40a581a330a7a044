"""The house worker's loop: orders from the server on stdin, a seat played for each.

The server writes JSON lines: ``{"play": {"match", "seat", "token", "bot", "budget_ms"}}``
(play that seat to its match's end) and ``{"leave": {"match", "seat"}}`` (stop playing it).
The worker writes ``{"ready": true}`` once it can play, and ``{"done": {"match", "seat",
"error"}}`` when it stops playing a seat of its own accord: its match ended (``error``
``null``) or it could not go on (the error in words; the server hands the seat out again).
When stdin closes (the server stopped or died) it leaves every seat and exits: a worker never
outlives its server.

Why a thread per decision is enough here: each seat's bot thinks in a thread of this process
(:func:`~cardarena.clients.client.decide_with`), so a slow decision holds neither the other
seats' streams nor, above all, the server's event loop, which only ever sees this process's
calls. The server bounds how many seats one worker plays.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import functools
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Final

from ..bots.base import Bot, load_bot
from ..client import ArenaClient, Ticket
from ..client.cancelling import cancel_until_ended

RETRY_FOR: Final = 120.0
"""How long a seat's stream is retried without progress (the server restarting, say) before
the worker gives the seat back to the server."""
LINE_LIMIT: Final = 1 << 20
PR_SET_PDEATHSIG: Final = 1
"""Linux's prctl option: the signal this process gets when its parent dies."""

Say = Callable[[dict[str, Any]], None]
Key = tuple[str, int]


def make_bot(kind: str, budget_ms: int = 0) -> Bot:
    """A fresh reference bot for one seat (``budget_ms``: an "mc" seat's thinking time)."""
    params = {"budget_ms": float(budget_ms)} if kind == "mc" and budget_ms else {}
    return load_bot(kind, seed=int.from_bytes(os.urandom(8), "big"), params=params)


async def play_seat(client: ArenaClient, order: dict[str, Any], say: Say) -> None:
    """Play one seat to its match's end, then say so (or why it could not)."""
    match_id, seat = str(order["match"]), int(order["seat"])
    error: str | None = None
    try:
        bot = make_bot(str(order["bot"]), int(order.get("budget_ms") or 0))
        await client.play(Ticket(match_id, seat, str(order["token"])), bot, via="play")
    except asyncio.CancelledError:
        raise  # the server asked this seat to leave: it knows
    except Exception as failure:  # any failure of one seat is told, not raised
        error = f"{type(failure).__name__}: {failure}"[:500]
    say({"done": {"match": match_id, "seat": seat, "error": error}})


async def work(address: str, orders: asyncio.StreamReader, say: Say) -> None:
    """Play the seats the server orders until ``orders`` ends."""
    async with ArenaClient(address, retry_for=RETRY_FOR) as client:
        playing: dict[Key, asyncio.Task[None]] = {}
        say({"ready": True})
        while line := await orders.readline():
            message = json.loads(line)
            if "play" in message:
                order = message["play"]
                key = (str(order["match"]), int(order["seat"]))
                if key not in playing or playing[key].done():
                    playing[key] = asyncio.create_task(play_seat(client, order, say))
                    playing[key].add_done_callback(functools.partial(_forget, playing, key))
            elif "leave" in message:
                left = message["leave"]
                gone = playing.pop((str(left["match"]), int(left["seat"])), None)
                if gone is not None:
                    gone.cancel()
        await leave_all(set(playing.values()))


async def leave_all(seats: set[asyncio.Task[None]]) -> None:
    """Cancel every seat's task until each has ended. Once is not enough: a task cancelled
    while gRPC sets up one of its calls may lose the cancellation (see
    :mod:`~cardarena.clients.client.cancelling`), and a seat retrying a dead server would
    then keep this worker alive for the two minutes of ``RETRY_FOR``."""
    await cancel_until_ended(seats)


def _forget(playing: dict[Key, asyncio.Task[None]], key: Key, task: asyncio.Task[None]) -> None:
    if playing.get(key) is task:
        del playing[key]


def say_line(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def die_with_parent() -> None:
    """Ask Linux to end this worker when the server that started it dies, whatever the
    worker is doing then (``PR_SET_PDEATHSIG``): the closed stdin says the same, but only to
    a worker whose event loop reads it. Elsewhere, or if the server died before this ran,
    the closed stdin alone ends it."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request was made
        os._exit(0)


async def _main(address: str) -> None:
    loop = asyncio.get_running_loop()
    orders = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(orders), sys.stdin)
    await work(address, orders, say_line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cardarena.clients.house",
        description="A cardarena server's house worker: plays the seats the server orders on"
        " stdin (JSON lines) as a client of that server. Started by `cardarena serve"
        " --house-bots N`; not for people.",
    )
    parser.add_argument("--server", required=True, metavar="HOST:PORT")
    args = parser.parse_args(argv)
    die_with_parent()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args.server))
    return 0
