"""``--tournament DEALS``: both tournament paths side by side, beside the server's ceiling.

Why: a tournament is what the server is for. Since issue 12 it is hosted by the server
(``TournamentService``; ``cardarena tournament`` starts every bot as a ``cardarena bot
connect`` process of its own), and the older in-process runner (``run_tournament``,
``--in-process``: one channel, a task per match, each seat's bot asked through its guard) is
still there. Issue 16 asks for matches/min and actions/s of a tournament of random bots beside
the server's closed-loop actions/s measured in the same run, with the runner costing at most
20% of it; this prints both paths, so that the hosted one is held to the same budget.

Per repeat, in rotating order, each on a fresh SQLite server on 127.0.0.1:0:

* the *ceiling*: the bench's own closed loop (``--pattern play``: one Play call per seat, the
  call both paths make too) on the same game and player count, at
  ``--matches`` concurrent matches (default: the tournament's ``--concurrency``);
* the *hosted* tournament (``hosted.py``): the launcher in a process of its own creates it,
  starts one ``random`` entrant process per seat and follows it to its end; timed from the
  create call, the bots' start timed apart;
* the *in-process runner* (``inprocess.py``): ``run_tournament`` in a process of its own, one
  ``random`` bot per seat.

Both tournaments play the same game, players, ``DEALS`` duplicate deals (each in every
rotation of the seats), ``--concurrency`` matches at once and seed. Actions come from the
server's own counter (``cardarena_actions_total``), CPU from ``/proc`` and process times.

Reported (medians over the repeats): matches, matches/min, actions/s, each path ÷ the ceiling
(the median of the per-repeat ratios) and so what the path costs (1 − that), hosted ÷ runner,
the hosted path's start-up (spawn, connected) and the bots' exit, server and client CPU per
action (the hosted path's client: launcher plus bot processes), faults and failed matches.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from .common import Configuration, Pattern
from .compare import say
from .hosted import run_hosted_once
from .inprocess import NAN, TournamentRun, run_tournament_once
from .report import cell
from .run import RunResult, run_once

RUNNER_BUDGET = 0.20
"""Issue 16: the runner may cost at most 20% of the server's closed-loop actions/s."""

PARTS = ("ceiling", "hosted", "runner")

CEILING_PATTERN: Pattern = "play"
"""The ceiling's calls: what both tournament paths' seats make (``ArenaClient.play(via="play")``)."""


def order_of(repeat: int) -> tuple[str, ...]:
    """The parts in the order of ``repeat``: rotated by one each repeat, so that none is
    always first (on a fresh machine) or last (on a warm one)."""
    shift = repeat % len(PARTS)
    return PARTS[shift:] + PARTS[:shift]


def compare_tournament(args: argparse.Namespace) -> int:
    """Per repeat, in rotating order: the closed-loop ceiling, a hosted tournament and a
    tournament of the in-process runner."""
    ceiling = Configuration("ceiling", "durable", pattern=CEILING_PATTERN)
    window = args.seconds / args.repeats
    peers: list[RunResult] = []
    runs: dict[str, list[TournamentRun]] = {"hosted": [], "runner": []}
    began = time.monotonic()
    for repeat in range(args.repeats):
        for part in order_of(repeat):
            if part == "ceiling":
                peer = run_once("durable", args, window, repeat, 0, pattern=CEILING_PATTERN)
                peers.append(peer)
                say(began, ceiling, repeat, peer, "closed loop: the ceiling")
                continue
            measure = run_hosted_once if part == "hosted" else run_tournament_once
            run = measure(args, repeat)
            runs[part].append(run)
            print(
                f"[{time.monotonic() - began:6.1f} s] {part} tournament run {repeat + 1}: "
                f"{run.actions_per_s:,.0f} actions/s, {run.matches} matches in "
                f"{run.seconds:.1f} s, {run.failed} failed",
                file=sys.stderr,
                flush=True,
            )
    report_tournament(args, peers, runs["hosted"], runs["runner"], window)
    return 0


def med(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else NAN


def of(runs: Sequence[TournamentRun], value: Callable[[TournamentRun], float]) -> float:
    return med([value(run) for run in runs])


def ratios(runs: Sequence[TournamentRun], peers: Sequence[RunResult]) -> list[float]:
    """Per repeat: the tournament's actions/s ÷ the ceiling's of the same repeat."""
    return [
        t.actions_per_s / p.actions_per_s
        for t, p in zip(runs, peers, strict=True)
        if p.actions_per_s > 0
    ]


Row = tuple[str, float, float, float, int]


def rows_of(
    peers: Sequence[RunResult], hosted: Sequence[TournamentRun], runner: Sequence[TournamentRun]
) -> list[Row]:
    def row(
        label: str,
        value: Callable[[TournamentRun], float],
        digits: int,
        ceiling: Callable[[RunResult], float] | None = None,
    ) -> Row:
        peer = med([ceiling(p) for p in peers]) if ceiling is not None else NAN
        return (label, of(hosted, value), of(runner, value), peer, digits)

    share = (med(ratios(hosted, peers)), med(ratios(runner, peers)))
    return [
        row("matches", lambda t: t.matches, 0),
        row("matches/min", lambda t: t.matches_per_min, 1),
        row("actions/s", lambda t: t.actions_per_s, 0, lambda p: p.actions_per_s),
        ("÷ ceiling actions/s (per repeat)", share[0], share[1], 1.0, 2),
        ("cost: 1 − that (budget 0.20)", 1 - share[0], 1 - share[1], NAN, 2),
        row("create (or start) to end (s)", lambda t: t.seconds, 2),
        row("  start(): create + spawn bots (s)", lambda t: t.start_seconds, 3),
        row("  create to every bot connected (s)", lambda t: t.connected_seconds, 2),
        row("bots' exit after the end (s)", lambda t: t.left_seconds, 2),
        row(
            "server CPU per action (us)",
            lambda t: t.server_cpu_us_per_action,
            0,
            lambda p: p.server_cpu_us_per_action,
        ),
        row(
            "client CPU per action (us)",
            lambda t: t.client_cpu_us_per_action,
            0,
            lambda p: p.client_cpu_share / max(p.actions_per_s, 1e-9) * 1e6,
        ),
        row("  of which bot processes (us)", bot_us, 0),
        row(
            "server CPU (cores busy)",
            lambda t: t.server_cpu / t.seconds,
            2,
            lambda p: p.server_cpu_share,
        ),
        row(
            "client CPU (cores busy)",
            lambda t: (t.client_cpu + t.bot_cpu) / t.seconds,
            2,
            lambda p: p.client_cpu_share,
        ),
    ]


def bot_us(run: TournamentRun) -> float:
    return run.bot_cpu / max(run.actions, 1) * 1e6 if run.bot_cpu else NAN


def report_tournament(
    args: argparse.Namespace,
    peers: Sequence[RunResult],
    hosted: Sequence[TournamentRun],
    runner: Sequence[TournamentRun],
    window: float,
) -> None:
    print(
        f"cardarena tournament throughput: {args.game}, {args.players} random bots, "
        f"{args.tournament} deals x {args.players} rotations, concurrency {args.concurrency}; "
        f"hosted: TournamentService, one `cardarena bot connect` process per entrant, started "
        f"by the launcher; runner: run_tournament in one process; ceiling: the bench's closed "
        f"loop ({CEILING_PATTERN}) at {args.matches} matches, {window:.1f} s per run; {args.repeats} "
        f"repeat(s), a fresh SQLite server each" + (" (medians)" if args.repeats > 1 else "")
    )
    print(f"{'':38}{'hosted':>12}{'in-process':>12}{'ceiling':>12}")
    for label, ours, theirs, ceiling, digits in rows_of(peers, hosted, runner):
        print(f"{label:38}{cell(ours, digits, 12)}{cell(theirs, digits, 12)}", end="")
        print(cell(ceiling, digits, 12))
    for name, runs in (("hosted", hosted), ("in-process", runner)):
        first = next((t.first_error for t in runs if t.first_error), "")
        print(
            f"{name}: failed matches {sum(t.failed for t in runs)}"
            + (
                f", faults {sum(t.faults for t in runs)}, forfeits {sum(t.forfeits for t in runs)}"
                f", bot processes that stopped with an error {sum(t.bots_stopped for t in runs)}"
                if name == "hosted"
                else ""
            )
            + (f"; first: {first}" if first else "")
        )
    print(f"errors of the ceiling's clients: {sum(sum(p.errors.values()) for p in peers)}")
    if args.repeats > 1:
        for name, runs in (("hosted", hosted), ("in-process", runner)):
            each = ", ".join(f"{t.actions_per_s:,.0f}" for t in runs)
            print(f"{name} actions/s per run: {each}")
        print("ceiling actions/s per run: " + ", ".join(f"{p.actions_per_s:,.0f}" for p in peers))
        for name, runs in (("hosted", hosted), ("in-process", runner)):
            each = ", ".join(f"{r:.2f}" for r in ratios(runs, peers))
            print(f"{name} ÷ ceiling per run: {each}")
    pairs = [h.actions_per_s / r.actions_per_s for h, r in zip(hosted, runner, strict=True)]
    if pairs:
        print(
            f"hosted ÷ in-process actions/s: {med(pairs):.2f} (median of the per-repeat ratios: "
            + ", ".join(f"{r:.2f}" for r in pairs)
            + ")"
        )
    for name, runs in (("hosted path (launcher + bots)", hosted), ("in-process runner", runner)):
        share = med(ratios(runs, peers))
        if not math.isnan(share):
            verdict = "within" if 1 - share <= RUNNER_BUDGET else "over"
            print(
                f"{name}: {share:.2f} of the ceiling's actions/s, it costs {1 - share:.0%} "
                f"({verdict} the issue's budget of {RUNNER_BUDGET:.0%})"
            )
