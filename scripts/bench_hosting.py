"""The server's own cost per action, without gRPC: the hosting layer beside its two parts.

Why: ``bench_server.py`` measures the whole server beside a no-op gRPC ceiling, and on a
shared 2-core machine its figures move by 10–20% from run to run, more than most changes to
the server's own code are worth. This measures only what the server adds to an action, in one
process, by CPU time, with nothing else in the way: N Hexathlon matches hosted on a fresh
SQLite store (``synchronous=FULL``, group commit), four readers each draining their queues as
a stream does (each message made into its response and serialized), every match acting as
fast as it can with seeded random legal actions. Beside it, in the same round: the engine
alone applying the same actions (on copies of the same matches), and the store alone
appending one entry per action for as many matches at once. What is left, hosting minus
engine minus store, is the hosting layer's own: locks, request ids, encoding, projection,
readers, the clock. It asserts nothing about speed.

How to run (from the repository root)::

    .venv/bin/python scripts/bench_hosting.py                       # 200 matches, ~30 s
    .venv/bin/python scripts/bench_hosting.py --matches 50 --actions 100 --rounds 5
    .venv/bin/python scripts/bench_hosting.py --profile             # where the time goes
    .venv/bin/python scripts/bench_hosting.py --play --stages       # Play-like, per stage

``--play`` acts as a Play call does (each match's actions in a task marked ``hosting.steady``:
no task of its own per action), ``--timed`` hosts matches with a move clock, and ``--stages``
prints each stage's CPU per action on the event loop and the writer thread
(``CARDARENA_STAGE_TIMES=1``, as ``bench_server.py --stages``), which is far steadier than a
run's total on a shared machine: compare a change by running both versions in turn, several
rounds each, and reading the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

if "--stages" in sys.argv[1:]:  # read once, when cardarena.server.metrics is imported
    os.environ["CARDARENA_STAGE_TIMES"] = "1"

from cardarena.engine import Match
from cardarena.server import metrics
from cardarena.server.api.streams import response
from cardarena.server.hosting import Arena, HostedMatch, Subscriber, steady
from cardarena.server.logs import configure_logging
from cardarena.server.store import SqliteStore
from cardarena.server.store.records import MatchRecord
from cardarena.v1 import service_pb2 as spb

Moves = list[tuple[int, int]]
"""One match's actions in order: ``(seat, action)``."""


async def drain(reader: Subscriber) -> None:
    """What a seat's stream does with each message, short of writing it to a socket."""
    while (item := await reader.queue.get()) is not None:
        made = response(spb.StreamEventsResponse, item)
        if not isinstance(made, bytes):  # a published event comes serialized already
            made.SerializeToString()


async def seated(arena: Arena, matches: int, move_ms: int = 0) -> list[HostedMatch]:
    hosted = []
    for _ in range(matches):
        match = await arena.create("hexathlon", 4, None, move_ms=move_ms)
        for _ in range(4):
            await match.join(None, "bench")
        hosted.append(match)
    return hosted


async def act(match: HostedMatch, actions: int, rng: random.Random, moves: Moves) -> None:
    for i in range(actions):
        seat = match.engine.to_act
        if seat is None:
            return
        action = rng.choice(match.engine.legal_actions())
        await match.submit(seat, action, match.last_seq, f"r{i}")
        moves.append((seat, action))


def cpu_per(count: int, run: Callable[[], object]) -> float:
    """µs of this process's CPU (every thread) per one of ``count``."""
    started = time.process_time()
    run()
    return (time.process_time() - started) * 1e6 / max(count, 1)


async def hosting_round(
    matches: int,
    actions: int,
    seed: int,
    profile: bool,
    *,
    play: bool = False,
    move_ms: int = 0,
    stages: dict[str, list[float]] | None = None,
) -> tuple[float, int, list[tuple[Match, Moves]]]:
    """µs per action of hosted play; the actions; each match's engine as it started. With
    ``stages``, each stage's µs per action is appended to it."""
    with tempfile.TemporaryDirectory() as tmp:
        async with SqliteStore(Path(tmp) / "bench.db") as store:
            hosted = await seated(Arena(store), matches, move_ms)
            starts = [h.engine.clone() for h in hosted]
            readers = [h.readers.subscribe(seat) for h in hosted for seat in range(4)]
            draining = [asyncio.create_task(drain(r)) for r in readers]
            moves: list[Moves] = [[] for _ in hosted]
            profiler = cProfile.Profile() if profile else None
            acting = [
                asyncio.create_task(act(h, actions, random.Random(seed * 100_003 + i), m))
                for i, (h, m) in enumerate(zip(hosted, moves, strict=True))
            ]
            for task in acting if play else ():
                steady(task)  # as a Play call's acting task: never cancelled mid-action
            metrics.LOOP.ns.clear()
            metrics.WRITER.ns.clear()
            started, loop_started = time.process_time(), time.thread_time()
            if profiler is not None:
                profiler.enable()
            await asyncio.gather(*acting)
            loop_cpu = time.thread_time() - loop_started
            if profiler is not None:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
            elapsed = time.process_time() - started
            for task in draining:
                task.cancel()
            dropped = sum(r.dropped for r in readers)
            if dropped:  # a reader that fell behind costs nothing more: the figure would flatter
                raise SystemExit(f"{dropped} readers fell a whole queue behind: fewer --matches")
            count = sum(len(m) for m in moves)
            if stages is not None:
                for thread, laps in (("loop", metrics.LOOP), ("writer", metrics.WRITER)):
                    for stage, ns in laps.ns.items():
                        stages.setdefault(f"{thread}: {stage}", []).append(ns / 1e3 / count)
                stages.setdefault("loop: the thread's CPU", []).append(loop_cpu * 1e6 / count)
            return elapsed * 1e6 / max(count, 1), count, list(zip(starts, moves, strict=True))


def engine_alone(played: list[tuple[Match, Moves]]) -> float:
    """µs per action of the engine applying the same actions to the same matches."""
    count = sum(len(moves) for _, moves in played)

    def run() -> None:
        for match, moves in played:
            for seat, action in moves:
                match.apply(seat, action)

    return cpu_per(count, run)


async def store_alone(matches: int, actions: int) -> float:
    """µs per append of ``matches`` matches appending one entry each at once, ``actions``
    times, with a request id each (as a hosted action's write is)."""
    payload = bytes(48)  # about a played card's entry
    with tempfile.TemporaryDirectory() as tmp:
        async with SqliteStore(Path(tmp) / "bench.db") as store:
            for i in range(matches):
                record = MatchRecord(
                    f"m{i}", "2026-01-01T00:00:00.000Z", "hexathlon", 4, b"{}", bytes(32), "", ""
                )
                await store.create_match(record)

            async def append(i: int) -> None:
                for seq in range(actions):
                    await store.append(
                        f"m{i}", [payload], expected_seq=seq, request_id=f"r{seq}", seat=0
                    )

            started = time.process_time()
            await asyncio.gather(*(append(i) for i in range(matches)))
            return (time.process_time() - started) * 1e6 / (matches * actions)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="matches at once (200)")
    parser.add_argument("--actions", type=int, default=40, help="actions per match (40)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; medians shown (3)")
    parser.add_argument("--seed", type=int, default=1, help="of the random actions (1)")
    parser.add_argument("--profile", action="store_true", help="profile one hosting round")
    parser.add_argument(
        "--play", action="store_true", help="act as a Play call does (no task per action)"
    )
    parser.add_argument("--timed", action="store_true", help="matches with a 60 s move clock")
    parser.add_argument(
        "--stages", action="store_true", help="print each stage's CPU per action (medians)"
    )
    args = parser.parse_args(argv)
    for name in ("matches", "actions", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    configure_logging("warning")
    hosting: list[float] = []
    engine: list[float] = []
    store: list[float] = []
    move_ms = 60_000 if args.timed else 0
    stages: dict[str, list[float]] = {}
    if args.profile:  # a round of its own: the profiler's overhead stays out of the medians
        asyncio.run(
            hosting_round(
                args.matches, args.actions, args.seed, True, play=args.play, move_ms=move_ms
            )
        )
    for round_ in range(args.rounds):
        per_action, count, played = asyncio.run(
            hosting_round(
                args.matches,
                args.actions,
                args.seed + round_,
                False,
                play=args.play,
                move_ms=move_ms,
                stages=stages if args.stages else None,
            )
        )
        hosting.append(per_action)
        engine.append(engine_alone(played))
        store.append(asyncio.run(store_alone(args.matches, args.actions)))
        print(
            f"round {round_ + 1}: {count:,} actions; hosting {per_action:.0f}, engine "
            f"{engine[-1]:.1f}, store {store[-1]:.0f} µs CPU per action",
            file=sys.stderr,
        )
    h, e, s = (statistics.median(x) for x in (hosting, engine, store))
    print(f"hexathlon, 4 players, {args.matches} matches at once, medians of {args.rounds} rounds")
    print(f"  hosted action (engine, store, readers)   {h:7.0f} µs CPU")
    print(f"  the engine alone, same actions           {e:7.1f} µs   {e / h:5.1%}")
    print(f"  the store alone, one append each         {s:7.0f} µs   {s / h:5.1%}")
    print(
        f"  the hosting layer's own (the rest)       {h - e - s:7.0f} µs   {(h - e - s) / h:5.1%}"
    )
    if stages:
        print(
            "  stages of a hosted action, µs of CPU per action (medians; each with a clock read):"
        )
        for name, values in sorted(stages.items()):
            print(f"    {name:<38} {statistics.median(values):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
