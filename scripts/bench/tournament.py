"""``--tournament DEALS``: the tournament runner's throughput beside the server's closed loop.

Why: a tournament is what the server is for, and the runner (``cardarena.clients``'
``run_tournament``: one channel, a task per match, each seat's bot asked through its guard)
has costs of its own that the bench's lean clients do not. The issue asks for matches/min and
actions/s of a tournament of random bots printed beside the server's closed-loop actions/s
measured in the same run, with the runner costing at most 20% of it.

Per repeat, in alternating order, each on a fresh SQLite server:

* the *ceiling*: the bench's own closed loop (``--pattern turns``: StreamEvents prompts and
  unary SubmitAction, the calls the runner makes too) on the same game and player count, at
  ``--matches`` concurrent matches (default: the tournament's ``--concurrency``);
* the *tournament*: ``run_tournament`` in a process of its own, one ``random`` bot per seat
  (``r0=random``, ``r1=random``, ...), ``DEALS`` duplicate deals (each played in every rotation
  of the seats), ``--concurrency`` matches at once. Actions come from the server's own counter
  (``cardarena_actions_total``), CPU from ``/proc`` (server) and the runner's process time.

Reported: matches, matches/min, actions/s, server and client CPU per action, failed matches;
tournament ÷ ceiling actions/s, and so what the runner costs: 1 − that ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardarena.clients import TournamentConfig, parse_bot, run_tournament

from .common import Configuration
from .compare import say
from .measure import cpu_seconds, scrape
from .procs import server_processes
from .report import cell
from .run import RunResult, run_once

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

RUNNER_BUDGET = 0.20
"""Issue 16: the runner may cost at most 20% of the server's closed-loop actions/s."""


@dataclasses.dataclass
class TournamentRun:
    matches: int
    failed: int
    seconds: float
    actions: int
    server_cpu: float
    runner_cpu: float
    first_error: str

    @property
    def matches_per_min(self) -> float:
        return self.matches / self.seconds * 60

    @property
    def actions_per_s(self) -> float:
        return self.actions / self.seconds

    @property
    def server_cpu_us_per_action(self) -> float:
        return self.server_cpu / max(self.actions, 1) * 1e6

    @property
    def client_cpu_us_per_action(self) -> float:
        return self.runner_cpu / max(self.actions, 1) * 1e6


def runner_main(
    address: str, args: dict[str, Any], results: Queue[dict[str, Any]]
) -> None:  # pragma: no cover - runs in the runner's process
    """The runner's process: one tournament of random bots; its outcome back as a dict."""
    try:
        bots = [parse_bot(f"r{seat}=random") for seat in range(args["players"])]
        config = TournamentConfig(
            address=address,
            game=args["game"],
            bots=bots,
            players=args["players"],
            deals=args["deals"],
            concurrency=args["concurrency"],
            seed=args["seed"].to_bytes(32, "big"),
        )
        cpu = time.process_time()
        result = asyncio.run(run_tournament(config))
        failed = result.failed
        results.put(
            {
                "matches": len(result.matches),
                "failed": len(failed),
                "seconds": result.seconds,
                "cpu": time.process_time() - cpu,
                "first_error": failed[0].error or "" if failed else "",
            }
        )
    except BaseException as error:
        results.put({"fatal": f"{type(error).__name__}: {error}"})
        raise


def run_tournament_once(args: argparse.Namespace, repeat: int) -> TournamentRun:
    """A fresh SQLite server, one tournament against it in a process of its own."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp,
        server_processes("durable", Path(tmp), 0) as servers,
    ):
        server = servers[0]
        ctx = multiprocessing.get_context("spawn")
        results: Queue[dict[str, Any]] = ctx.Queue()
        settings = {
            "game": args.game,
            "players": args.players,
            "deals": args.tournament,
            "concurrency": args.concurrency,
            "seed": args.seed * 1000 + repeat,
        }
        runner = ctx.Process(target=runner_main, args=(server.address, settings, results))
        before = scrape(servers)
        cpu = cpu_seconds([server.process.pid])
        runner.start()
        try:
            outcome = results.get(timeout=args.setup_timeout + 3600)
        finally:
            runner.join(30)
            if runner.is_alive():
                runner.kill()
        server_cpu = cpu_seconds([server.process.pid]) - cpu
        after = scrape(servers)
    if "fatal" in outcome:
        raise RuntimeError(f"the tournament runner failed: {outcome['fatal']}")
    if before["scraped"] != 1 or after["scraped"] != 1:
        raise RuntimeError("could not read the server's action counter (its metrics)")
    return TournamentRun(
        matches=outcome["matches"],
        failed=outcome["failed"],
        seconds=outcome["seconds"],
        actions=after["actions"] - before["actions"],
        server_cpu=server_cpu,
        runner_cpu=outcome["cpu"],
        first_error=outcome["first_error"],
    )


def compare_tournament(args: argparse.Namespace) -> int:
    """Per repeat, in alternating order: the closed-loop ceiling and one tournament."""
    ceiling = Configuration("ceiling", "durable", pattern="turns")
    window = args.seconds / args.repeats
    peers: list[RunResult] = []
    tournaments: list[TournamentRun] = []
    began = time.monotonic()
    for repeat in range(args.repeats):
        for part in ("ceiling", "tournament") if repeat % 2 == 0 else ("tournament", "ceiling"):
            if part == "ceiling":
                peer = run_once("durable", args, window, repeat, 0, pattern="turns")
                peers.append(peer)
                say(began, ceiling, repeat, peer, "closed loop: the ceiling")
                continue
            run = run_tournament_once(args, repeat)
            tournaments.append(run)
            print(
                f"[{time.monotonic() - began:6.1f} s] tournament run {repeat + 1}: "
                f"{run.actions_per_s:,.0f} actions/s, {run.matches} matches in "
                f"{run.seconds:.1f} s, {run.failed} failed",
                file=sys.stderr,
                flush=True,
            )
    report_tournament(args, peers, tournaments, window)
    return 0


def med(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def report_tournament(
    args: argparse.Namespace,
    peers: list[RunResult],
    tournaments: list[TournamentRun],
    window: float,
) -> None:
    matches = tournaments[0].matches if tournaments else 0
    print(
        f"cardarena tournament throughput: {args.game}, {args.players} random bots, "
        f"{args.tournament} deals x {args.players} rotations ({matches} matches), concurrency "
        f"{args.concurrency}; ceiling: the bench's closed loop (turns) at {args.matches} "
        f"matches, {window:.1f} s per run; {args.repeats} repeat(s), fresh SQLite server each"
        + (" (medians)" if args.repeats > 1 else "")
    )
    print(f"{'':34}{'tournament runner':>20}{'closed-loop ceiling':>22}")
    rows: list[tuple[str, float, float, int]] = [
        ("matches/min", med([t.matches_per_min for t in tournaments]), float("nan"), 1),
        (
            "actions/s",
            med([t.actions_per_s for t in tournaments]),
            med([p.actions_per_s for p in peers]),
            0,
        ),
        (
            "server CPU per action (us)",
            med([t.server_cpu_us_per_action for t in tournaments]),
            med([p.server_cpu_us_per_action for p in peers]),
            0,
        ),
        (
            "client CPU per action (us)",
            med([t.client_cpu_us_per_action for t in tournaments]),
            med([p.client_cpu_share / max(p.actions_per_s, 1e-9) * 1e6 for p in peers]),
            0,
        ),
        (
            "server CPU (cores busy)",
            med([t.server_cpu / t.seconds for t in tournaments]),
            med([p.server_cpu_share for p in peers]),
            2,
        ),
        (
            "client CPU (cores busy)",
            med([t.runner_cpu / t.seconds for t in tournaments]),
            med([p.client_cpu_share for p in peers]),
            2,
        ),
    ]
    for label, ours, theirs, digits in rows:
        print(f"{label:34}{cell(ours, digits, 20)}{cell(theirs, digits, 22)}")
    failed = sum(t.failed for t in tournaments)
    errors = sum(sum(p.errors.values()) for p in peers)
    print(f"failed tournament matches: {failed}; errors of the ceiling's clients: {errors}")
    first = next((t.first_error for t in tournaments if t.first_error), "")
    if first:
        print(f"first failed match: {first}")
    if args.repeats > 1:
        each = ", ".join(f"{t.actions_per_s:,.0f}" for t in tournaments)
        print(f"tournament actions/s per run: {each}")
        print("ceiling actions/s per run: " + ", ".join(f"{p.actions_per_s:,.0f}" for p in peers))
    with contextlib.suppress(ZeroDivisionError):
        share = statistics.median(
            t.actions_per_s / p.actions_per_s for t, p in zip(tournaments, peers, strict=True)
        )
        verdict = "within" if 1 - share <= RUNNER_BUDGET else "over"
        print(
            f"tournament / ceiling actions/s: {share:.2f}; the runner costs {1 - share:.0%} of "
            f"the ceiling ({verdict} the issue's budget of {RUNNER_BUDGET:.0%})"
        )
