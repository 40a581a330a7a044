"""``--restart N``: how soon the SQLite server serves again after a stop, with N unfinished matches.

Why: a server that restarts (a deploy, a crash) reloads every unfinished match from its log
before it listens, so the time to serving grows with what it hosts; the issue's target is
under 10 s with 5,000 unfinished matches. The peer measured in the same run is a start on an
empty data dir: what starting costs before there is anything to resume.

The run: start ``cardarena serve`` on a fresh data dir; create N matches through its API with
the bench's own seeds (so a client-side engine replica knows each seat's legal actions without
a stream): every fourth is left *waiting* (all seats but one taken), the others *running* after
``--restart-actions`` actions each. Then, ``--repeats`` times and in alternating order, stop
the server with SIGKILL (a crash) and with SIGTERM (a graceful drain) and start it again on the
same data dir and port, timing from the exec to the ``listening`` line on stdout and to the
first answered GetMatch of a resumed match (a probe that starts at the exec and retries every
few milliseconds), and reading back from the server's log how many matches it resumed. Matches
per second resumed: resumed ÷ seconds to ``listening``, and the marginal rate over the empty
start. The probe's match must come back at the seq it was left at.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import grpc

from cardarena.engine.match import setup
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc
from cardarena.v1.codec import action_to_pb

from .common import CARDARENA, LOOPBACK
from .measure import vm_rss_kb
from .procs import await_listening

PROBE_OPTIONS = [
    # Reconnect at once while the server is not up yet: the default backoff (1 s and more)
    # would be measured as the server's start.
    ("grpc.initial_reconnect_backoff_ms", 5),
    ("grpc.min_reconnect_backoff_ms", 5),
    ("grpc.max_reconnect_backoff_ms", 20),
    ("grpc.use_local_subchannel_pool", 1),
]


NOT_UP = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
"""What the probe sees before the server serves: anything else is an answer."""


def free_port() -> int:
    """A loopback port free now, so that every start, the first too, is probed from its exec."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


@dataclasses.dataclass
class Start:
    """One start of the server: how long it took, what it resumed, what it holds."""

    process: subprocess.Popen[str]
    address: str
    listening_s: float
    answered_s: float
    resumed: int
    rss_mb: float
    stop_s: float = float("nan")  # the stop before this start: signal to exit


@dataclasses.dataclass
class Created:
    """The unfinished matches the run made, and the one the probe asks for."""

    waiting: int = 0
    running: int = 0
    actions: int = 0
    errors: Counter[str] = dataclasses.field(default_factory=Counter)
    probe: str = ""
    probe_seq: int = 0
    seconds: float = 0.0


OPERATOR = secrets.token_urlsafe(32)
"""The servers' operator token (given in the environment): the matches left waiting are the
operator's, which an open server would count against the benchmark's one address."""


def serve_command(data_dir: Path, listen: str) -> list[str]:
    # No expiry and no limits: nothing may change the matches between the stop and the start.
    return [
        str(CARDARENA),
        "serve",
        "--listen",
        listen,
        "--data-dir",
        str(data_dir),
        "--metrics-port",
        "-1",
        "--create-rate",
        "0",
        "--join-rate",
        "0",
        "--waiting-expiry",
        "0",
        "--log-level",
        "info",
    ]


def probe(address: str, match_id: str, answered: list[float], give_up: float) -> None:
    """GetMatch ``match_id`` until it is answered (its time appended to ``answered``)."""
    request = spb.GetMatchRequest(match_id=match_id)
    with grpc.insecure_channel(address, options=PROBE_OPTIONS) as channel:
        stub = service_pb2_grpc.MatchServiceStub(channel)
        while time.perf_counter() < give_up:
            try:
                stub.GetMatch(request, timeout=0.5, wait_for_ready=True)
            except grpc.RpcError as error:
                if error.code() in NOT_UP:
                    time.sleep(0.005)
                    continue
            answered.append(time.perf_counter())  # an answer, NOT_FOUND (the empty start) too
            return


def resumed_in(log_path: Path) -> int:
    """The ``resumed`` count of the server's JSON ``listening`` log line (-1: not found)."""
    for line in log_path.read_text().splitlines():
        if '"event": "listening"' in line:
            return int(json.loads(line).get("resumed") or 0)
    return -1


def start(data_dir: Path, listen: str, log_path: Path, probe_match: str, timeout: float) -> Start:
    """Exec the server on ``listen``; wait for its ``listening`` line and for its first answer
    to a GetMatch of ``probe_match`` (on the empty store: of none, answered NOT_FOUND)."""
    answered: list[float] = []
    started = time.perf_counter()
    give_up = started + timeout
    prober = threading.Thread(target=probe, args=(listen, probe_match, answered, give_up))
    prober.start()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            serve_command(data_dir, listen),
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
            env={**os.environ, "CARDARENA_ADMIN_TOKEN": OPERATOR},
        )
    try:
        address = await_listening(process, log_path, "durable", timeout)
        listening = time.perf_counter() - started
        prober.join(timeout)
    except BaseException:
        process.kill()
        raise
    return Start(
        process,
        address,
        listening,
        (answered[0] - started) if answered else float("nan"),
        resumed_in(log_path),
        vm_rss_kb([process.pid]) / 1024,
    )


def stop(server: Start, signum: int) -> float:
    """Stop the server with ``signum``; the seconds until it exited."""
    began = time.perf_counter()
    server.process.send_signal(signum)
    try:
        server.process.wait(60)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(10)
    return time.perf_counter() - began


async def create_unfinished(address: str, args: argparse.Namespace) -> Created:
    """N matches through the API: every fourth waiting (one seat free), the others running
    after ``--restart-actions`` actions, chosen with a client-side replica of each match."""
    prepared = setup(args.game, players=args.players, options={})
    created = Created()
    channels = [grpc.aio.insecure_channel(address) for _ in range(args.channels)]
    stubs = [service_pb2_grpc.MatchServiceStub(c) for c in channels]
    limit = asyncio.Semaphore(args.setup_concurrency)

    async def make(index: int) -> None:
        stub = stubs[index % len(stubs)]
        seed = hashlib.sha256(f"cardarena-bench/restart/{args.seed}/{index}".encode()).digest()
        waiting = index % 4 == 3
        request = spb.CreateMatchRequest(game=args.game, players=args.players, seed=seed)
        answer = await stub.CreateMatch(
            request, metadata=(("authorization", f"Bearer {OPERATOR}"),), timeout=30
        )
        match_id = answer.match.match_id
        tokens: list[str] = []
        seq = answer.match.last_seq
        for taken in range(args.players - 1 if waiting else args.players):
            join = spb.JoinMatchRequest(match_id=match_id, seat=taken, name=f"bench{taken}")
            joined = await stub.JoinMatch(join, timeout=30)
            tokens.append(joined.token)
            seq = max(seq, joined.match.last_seq)
        if waiting:
            created.waiting += 1
            return
        replica = prepared.start(seed)
        rng = random.Random(index)
        for number in range(args.restart_actions):
            to_act = replica.to_act
            if to_act is None or replica.over:
                break
            seat = to_act
            action = rng.choice(replica.legal_actions())
            done = await stub.SubmitAction(
                spb.SubmitActionRequest(
                    match_id=match_id,
                    seat=seat,
                    action=action_to_pb(action),
                    expected_seq=seq,
                    request_id=f"r{number}",
                ),
                metadata=(("authorization", f"Bearer {tokens[seat]}"),),
                timeout=30,
            )
            replica.apply(seat, action)
            seq = done.last_seq
            created.actions += 1
        created.running += 1
        created.probe, created.probe_seq = match_id, seq

    async def bounded(index: int) -> None:
        async with limit:
            try:
                await make(index)
            except grpc.aio.AioRpcError as error:
                created.errors[error.code().name] += 1

    began = time.perf_counter()
    try:
        await asyncio.gather(*(bounded(i) for i in range(args.restart)))
    finally:
        for channel in channels:
            await channel.close(None)
    created.seconds = time.perf_counter() - began
    return created


def check_probe(address: str, created: Created) -> str:
    """The probe's match as the restarted server has it: running, at the seq it was left at."""
    with grpc.insecure_channel(address) as channel:
        info = service_pb2_grpc.MatchServiceStub(channel).GetMatch(
            spb.GetMatchRequest(match_id=created.probe), timeout=30
        )
    status = spb.MatchStatus.Name(info.match.status)
    if info.match.last_seq != created.probe_seq:
        return f"{created.probe} came back at seq {info.match.last_seq}, not {created.probe_seq}"
    return f"{created.probe} came back {status} at seq {info.match.last_seq}, as it was left"


def compare_restart(args: argparse.Namespace) -> int:
    """The restart plan: an empty start, N unfinished matches, SIGKILL and SIGTERM restarts."""
    with tempfile.TemporaryDirectory(prefix="bench-restart-") as tmp:
        work = Path(tmp)
        timeout = args.setup_timeout
        empty_at = f"{LOOPBACK}:{free_port()}"
        empty = start(work / "empty", empty_at, work / "empty.log", "none", timeout)
        empty.stop_s = stop(empty, signal.SIGTERM)
        data = work / "data"
        listen = f"{LOOPBACK}:{free_port()}"
        server = start(data, listen, work / "first.log", "none", timeout)
        starts: dict[str, list[Start]] = {"SIGKILL": [], "SIGTERM": []}
        notes: list[str] = []
        try:
            created = asyncio.run(create_unfinished(listen, args))
            print(
                f"[created {created.waiting + created.running:,} unfinished matches in "
                f"{created.seconds:.1f} s]",
                file=sys.stderr,
                flush=True,
            )
            hosting_mb = vm_rss_kb([server.process.pid]) / 1024
            order = [("SIGKILL", signal.SIGKILL), ("SIGTERM", signal.SIGTERM)]
            for repeat in range(args.repeats):
                for name, signum in order if repeat % 2 == 0 else order[::-1]:
                    stopped = stop(server, signum)
                    log_path = work / f"restart-{name}-{repeat}.log"
                    server = start(data, listen, log_path, created.probe, timeout)
                    server.stop_s = stopped
                    starts[name].append(server)
                    print(
                        f"[restart after {name} {repeat + 1}: listening in "
                        f"{server.listening_s:.2f} s, {server.resumed:,} resumed]",
                        file=sys.stderr,
                        flush=True,
                    )
            if created.probe:
                notes.append(check_probe(listen, created))
        finally:
            stop(server, signal.SIGTERM)
        data_mb = sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) / 2**20
    report_restart(args, empty, created, starts, hosting_mb, data_mb, notes)
    return 0


def median(starts: list[Start], name: str) -> float:
    return float(statistics.median(getattr(s, name) for s in starts))


def report_restart(
    args: argparse.Namespace,
    empty: Start,
    created: Created,
    starts: dict[str, list[Start]],
    hosting_mb: float,
    data_mb: float,
    notes: list[str],
) -> None:
    unfinished = created.waiting + created.running
    print(
        f"cardarena restart: {args.game}, {args.players} players, {unfinished:,} unfinished "
        f"matches ({created.waiting:,} waiting with one seat free, {created.running:,} running "
        f"after {args.restart_actions} actions each), SQLite data dir {data_mb:.1f} MB, "
        f"{args.repeats} restart(s) per signal" + (" (medians)" if args.repeats > 1 else "")
    )
    print(
        f"before the stops the server held them in {hosting_mb:,.1f} MB RSS "
        f"(created in {created.seconds:.1f} s)"
    )
    columns = {"empty data dir": [empty], **{f"after {k}": v for k, v in starts.items()}}
    print(f"{'':40}" + "".join(f"{label:>18}" for label in columns))
    rows = [
        ("stop: signal to exit (s)", "stop_s", 2),
        ('exec to "listening" (s)', "listening_s", 2),
        ("exec to first answered GetMatch (s)", "answered_s", 2),
        ("matches resumed (the server's count)", "resumed", 0),
        ("server RSS after start (MB)", "rss_mb", 1),
    ]
    for label, name, digits in rows:
        cells = [f"{median(v, name):,.{digits}f}" if v else "-" for v in columns.values()]
        print(f"{label:40}" + "".join(f"{c:>18}" for c in cells))
    base = empty.listening_s
    for name, runs in starts.items():
        if not runs:
            continue
        listening = median(runs, "listening_s")
        resumed = median(runs, "resumed")
        extra = listening - base
        # Below a tenth of a second the difference is the machine's noise, not the resume.
        marginal = f"{resumed / extra:,.0f}/s" if extra > 0.1 else "no measurable cost"
        verdict = "the target: < 10 s at 5,000"
        if resumed >= 5000:
            verdict = ("meets " if listening < 10 else "misses ") + verdict
        print(
            f"after {name}: {listening:.2f} s to listening ({verdict}), {listening / max(base, 1e-9):.1f}x the empty start; {resumed / listening:,.0f} "
            f"matches/s resumed ({marginal} beyond the empty start); "
            f"{(median(runs, 'rss_mb') - empty.rss_mb) * 1024 / max(resumed, 1):,.1f} KB RSS per "
            "resumed match"
        )
    errors = ", ".join(f"{k}: {v}" for k, v in sorted(created.errors.items())) or "none"
    print(f"errors while creating: {errors}")
    for note in notes:
        print(f"probe: {note}")
