"""``--stages``: where an action's time goes in the server, stage by stage, beside the ceiling.

Why: the closed loop says how far the server is from the no-op ceiling, not why. With
``--stages`` both servers run with ``CARDARENA_STAGE_TIMES=1``: each marks the boundaries of
its work on an action (``server/metrics.py``, ``Laps``: one read of the thread's CPU clock
per boundary, on the event loop and on the store's writer thread) and serves the sums as
``cardarena_stage_seconds_total``, read over the window as every other counter is. Beside
them, from the kernel: the event loop thread's time on a core and runnable but waiting for
one (``schedstat``), and the process's CPU. What the loop spent on a core that no stage names
is gRPC's and asyncio's machinery (taking up calls and messages, the async generators handing
messages on, waking tasks): ``the rest``. CPU time, not wall time: on a shared machine a
stretch's wall time is mostly waiting for a core.

The timing itself costs a read of the thread's clock per boundary (a system call; the report
gives what they added up to, calibrated as the server starts): take the ratios from a run
without ``--stages``.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Mapping, Sequence

from .common import Configuration
from .run import RunResult

LOOP_STAGES = (
    ("decode", "request decoded (its deserializer)"),
    ("authorise", "Play/SubmitAction: checks, seat token, request id, action decoded"),
    ("submit", "under the match's lock: request ids, checks; after the write, the answer"),
    ("engine", "the engine applies the action"),
    ("encode", "events made into messages, and serialized for the store"),
    ("store: enqueue", "the append handed to the writer thread"),
    ("store: answer", "the writer's answers settled on the loop"),
    ("fold and clock", "the log folded (faults, banks), the turn clock rearmed"),
    ("publish", "events projected per kind of reader, queued to every reader"),
    ("prompt", "the YourTurn made and queued"),
    ("result", "the answer to the submitting call (metrics, ActionResult, events)"),
    ("handler", "the no-op servicer's whole work on an action"),
    ("send: respond", "each reader's item made into its stream's response message"),
    ("send: serialize", "each response serialized (gRPC calls the serializer)"),
)
"""The event loop's stages, in the order an action meets them, and what each is."""

WRITER_STAGES = (
    ("append: check", "the append's one SELECT (match, request id, lease, tail)"),
    ("append: hash", "the hash chain of the appended events"),
    ("append: insert", "the events' (and the request's) INSERTs"),
    ("statements", "BEGIN, savepoints and every other write of the batch"),
    ("commit", "COMMIT (the fsync's wait is not CPU)"),
    ("answer", "the callers' loops woken"),
)


def _median(runs: Sequence[RunResult], key: str) -> float:
    values = [r.stage_us.get(key, 0.0) for r in runs]
    return float(statistics.median(values)) if values else math.nan


def _derived(run: RunResult) -> dict[str, float]:
    """One run's figures beyond the stages: the loop's time on a core and what it was made
    of, its idle and waiting time, the other threads' CPU."""
    timed = sum(run.stage_us.get(f"loop:{name}", 0.0) for name, _ in LOOP_STAGES)
    writer = run.stage_us.get("writer:writer cpu", 0.0)
    return {
        "timed": timed,
        "clock": run.stage_us.get("loop:clock reads", math.nan),
        "rest": run.loop_on_cpu_us - timed,
        "on_cpu": run.loop_on_cpu_us,
        "waiting": run.loop_waiting_us,
        "idle": run.stage_us.get("loop:loop idle", math.nan),
        "writer_cpu": writer,
        "other_cpu": run.server_cpu_us_per_action - run.loop_on_cpu_us - writer,
        "cpu": run.server_cpu_us_per_action,
        "messages": run.messages_per_action,
    }


DERIVED = (
    ("timed", "loop: the stages above, summed"),
    ("clock", "loop: of which the clock's own reads"),
    ("rest", "loop: the rest (gRPC, asyncio, generators)"),
    ("on_cpu", "loop: on a core (kernel's count)"),
    ("waiting", "loop: runnable, waiting for a core (wall)"),
    ("idle", "loop: idle in its selector (wall)"),
    ("writer_cpu", "writer thread: CPU"),
    ("other_cpu", "other threads: CPU (gRPC core, readers)"),
    ("cpu", "server CPU, every thread"),
    ("messages", "stream messages per action per seat"),
)


def report_stages(
    args: argparse.Namespace,
    plan: Sequence[Configuration],
    runs: Mapping[str, Sequence[RunResult]],
) -> None:
    """Per pattern, one column per server: microseconds per action of each stage (medians)."""
    for pattern in args.patterns:
        configs = [c for c in plan if c.pattern == pattern]
        print(
            f"\nwhere a {pattern} action's time goes: microseconds of CPU per action on the thread "
            "named" + (" (medians)" if args.repeats > 1 else "")
        )
        heads = [c.kind for c in configs]
        print(f"{'':46}" + "".join(f"{h:>10}" for h in heads))
        rows: list[tuple[str, list[float]]] = []
        for name, _ in LOOP_STAGES:
            cells = [_median(runs[c.label], f"loop:{name}") for c in configs]
            if any(cells):
                rows.append((f"loop: {name}", cells))
        for key, label in DERIVED:
            cells = [
                float(statistics.median(_derived(r)[key] for r in runs[c.label])) for c in configs
            ]
            rows.append((label, cells))
        for name, _ in WRITER_STAGES:
            cells = [_median(runs[c.label], f"writer:{name}") for c in configs]
            if any(cells):
                rows.append((f"writer: {name}", cells))
        for label, cells in rows:
            digits = 2 if label.startswith("stream messages") else 1
            print(f"{label:46}" + "".join(f"{v:>10,.{digits}f}" for v in cells))
    print("\nthe stages:")
    for name, what in (*LOOP_STAGES, *WRITER_STAGES):
        print(f"  {name}: {what}")
