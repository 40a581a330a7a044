"""Auditor speed benchmark: events audited per second, next to the engine replaying the same logs.

Why: a skeptic audits a whole tournament, thousands of logs, and the auditor does much more
than replay (canonical decoding, the chain, MatchInfo, the server's events, faults), so its
throughput needs a number and a yardstick. The yardstick is the engine alone replaying the
same logs (``cardarena.engine.replay`` over events decoded beforehand, deals recomputed from
the seed): the cost of the rules themselves, which no check can avoid. It is a benchmark run
on purpose, not a test: it asserts nothing about speed.

What it measures. It plays ``--matches`` random matches of each game (``cardarena.clients.play``
with seeded random bots, so every run audits the same logs), each log exactly as a server
returns it; then, in ``--rounds`` rounds, it times ``audit_log`` over every log (in this
process, one log after another, each round from a cold start: the decoder's memos of payloads
and scores already shown canonical are emptied first, so a round costs what auditing new logs
costs) and ``replay`` over the same logs, and prints for each game and in all the medians over
rounds of events per second (entries of the log) and their ratio. Times are this process's CPU
time (``time.process_time``): on a machine shared with other work the wall clock also counts
the time other processes had the core (the audits' wall clock is printed beside, for
comparison; the ratio is the steadiest figure either way). Every audit must come out clean
(exit 1 otherwise: a fast auditor that fails is no result).

How to run (from the repository root)::

    .venv/bin/python scripts/bench_audit.py                    # every game, about a minute
    .venv/bin/python scripts/bench_audit.py --games hexathlon --matches 20 --rounds 3
    .venv/bin/python scripts/bench_audit.py --profile hexathlon     # where the time goes
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import os
import pstats
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from cardarena.clients import RandomBot, play
from cardarena.clients.audit import audit_log, canonical
from cardarena.engine import GAMES, replay
from cardarena.engine import events as ev
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

PLAYERS = {"pentathlon": 4, "hexathlon": 4, "heptathlon": 4, "crazy_sixes": 4, "triathlon": 3}


@dataclass
class Logs:
    game: str
    logs: list[spb.GetMatchLogResponse]
    decoded: list[tuple[list[ev.Event], bytes]]

    @property
    def events(self) -> int:
        return sum(len(log.entries) for log in self.logs)


def make_logs(game: str, matches: int) -> Logs:
    players = PLAYERS.get(game, GAMES[game].default_players)
    logs = []
    for n in range(matches):
        seed = hashlib.sha256(f"bench-audit/{game}/{n}".encode()).digest()
        bots = [RandomBot(seed=int.from_bytes(seed[:8], "big") + s) for s in range(players)]
        logs.append(play(game, bots, seed=seed, match_id=f"{game}-{n}"))
    decoded = []
    for log in logs:
        events = [codec.event_from_pb(pb.Event.FromString(e.event)) for e in log.entries]
        decoded.append(([e for e in events if e is not None], bytes(log.seed)))
    return Logs(game, logs, decoded)


def time_audits(logs: Logs) -> tuple[float, float]:
    """CPU and wall-clock seconds of auditing every log."""
    canonical.forget()  # each round audits the logs as new ones: nothing shown canonical yet
    started, wall = time.process_time(), time.perf_counter()
    for log in logs.logs:
        report = audit_log(log)
        if not report.ok:
            sys.exit(f"{log.match.match_id} does not audit clean: {report.failure}")
    return time.process_time() - started, time.perf_counter() - wall


def time_replays(logs: Logs) -> float:
    started = time.process_time()
    for events, seed in logs.decoded:
        replay(events, seed=seed)
    return time.process_time() - started


def median_total(times: dict[str, list[float]], group: list[Logs], rounds: int) -> float:
    """The median over rounds of the seconds the games of ``group`` took together."""
    return statistics.median(sum(times[s.game][r] for s in group) for r in range(rounds))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=list(PLAYERS), choices=list(GAMES))
    parser.add_argument("--matches", type=int, default=40, help="logs per game (default 40)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--profile", choices=list(GAMES), help="profile the audits of one game")
    args = parser.parse_args(argv)
    if args.profile:
        logs = make_logs(args.profile, args.matches)
        profiler = cProfile.Profile()
        profiler.runcall(time_audits, logs)
        stats = pstats.Stats(profiler).strip_dirs()
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(20)
        return 0
    sets = [make_logs(game, args.matches) for game in args.games]
    audit_s: dict[str, list[float]] = {s.game: [] for s in sets}
    wall_s: dict[str, list[float]] = {s.game: [] for s in sets}
    replay_s: dict[str, list[float]] = {s.game: [] for s in sets}
    for _ in range(args.rounds):  # interleaved, so that each game sees the machine's moods
        for logs in sets:
            cpu, wall = time_audits(logs)
            audit_s[logs.game].append(cpu)
            wall_s[logs.game].append(wall)
            replay_s[logs.game].append(time_replays(logs))
    print(
        f"{'game':<12} {'logs':>5} {'events':>7} {'audit ev/s':>11} {'replay ev/s':>12} ratio"
        f" {'audit ev/s (wall)':>18}"
    )
    rows = [(s.game, [s]) for s in sets] + [("all", sets)]
    for name, group in rows:
        events = sum(s.events for s in group)
        audit, engine, wall = (
            events / median_total(times, group, args.rounds)
            for times in (audit_s, replay_s, wall_s)
        )
        print(
            f"{name:<12} {sum(len(s.logs) for s in group):>5} {events:>7} {audit:>11,.0f}"
            f" {engine:>12,.0f} {audit / engine:5.2f} {wall:>18,.0f}"
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"medians of {args.rounds} rounds, CPU time (and the audits' wall clock); audit: "
        f"cardarena.clients.audit.audit_log in-process; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
