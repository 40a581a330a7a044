"""Bad and hostile input to every ``cardarena`` command (issue 27): each answer is one line
naming the problem and an exit status (2 a usage error, as argparse's; 1 a failure at run
time; ``health``, ``log`` and ``audit`` keep the statuses their docs give scripts), never a
traceback, a silent wrong result or a hang.

One table, run through the real ``cardarena`` entry point in a subprocess (a full disk as
standard output can only be seen there), each case bounded by a time-out: a refusal that
comes after the work (a whole match played before its ``--html`` is found unwritable, a dead
server retried for half a minute) fails it. Dead servers are ``127.0.0.1:1``; a port in use
is one this test holds.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

CARDARENA = Path(sys.executable).parent / "cardarena"
TIMEOUT_S = 30.0
"""Far above any case's time (the slowest, a dead server, is named within 3 s)."""
SEED = "ab" * 32
FULL = "/dev/full"


class Case(NamedTuple):
    argv: str
    """The arguments, split as a shell would; ``{log}`` a good log file, ``{tmp}`` a folder,
    ``{busy}`` a port in use on 127.0.0.1."""
    code: int
    says: str
    """In the last line of standard error (standard output for exit 0)."""
    stdout: str = ""
    """``FULL``: standard output is ``/dev/full``."""
    env: tuple[tuple[str, str], ...] = ()
    absent: str = ""
    """Nowhere in what the command prints."""


DEAD = "127.0.0.1:1"
THREE = "--bot random --bot rules --bot r2=random"
TOURNAMENT = f"tournament --server {DEAD} --game triathlon {THREE}"
CONNECT = "bot connect --tournament t"
NO_ROOM = "cannot write the output: No space left on device"
SLOW_MATCH = "play triathlon --players 3 --bot mc,budget_ms=60000 --move-ms 600000"
"""A match that would take hours: a refusal must come before it is played."""
SERVE = "serve --data-dir {tmp}/data --listen 127.0.0.1:0"

CASES = [
    # Outputs that cannot be written: one line, before any work where it can be known.
    Case("games", 1, NO_ROOM, stdout=FULL),
    Case("games --json", 1, NO_ROOM, stdout=FULL),
    Case("demo --game triathlon --quiet", 1, NO_ROOM, stdout=FULL),
    Case("replay {log}", 1, NO_ROOM, stdout=FULL),
    Case("play triathlon --players 3 --bot random --log /dev/full", 1, "/dev/full: No space"),
    Case("play triathlon --players 3 --bot random --html /dev/full", 1, "/dev/full: No space"),
    Case(f"{SLOW_MATCH} --html /proc/x.html", 2, "--html: cannot write /proc/x.html"),
    Case(f"{SLOW_MATCH} --log /proc/x.json", 2, "--log: cannot write /proc/x.json"),
    Case("replay {log} --html /proc/nope.html", 2, "--html: cannot write /proc/nope.html"),
    Case(f"log fetch --server {DEAD} --match m --out /proc/nope", 2, "cannot create /proc/nope"),
    Case(f"{TOURNAMENT} --json /proc/r.json", 2, "--json: cannot write /proc/r.json"),
    Case(f"{TOURNAMENT} --bot-logs /proc/logs", 2, "--bot-logs: cannot create /proc/logs"),
    Case(f"audit --server {DEAD} --match m --save /proc/m.pb", 2, "--save: cannot write"),
    # A bot's parameters, typed by its constructor, each refusal naming the parameter.
    Case("play triathlon --bot mc,budget_ms=abc", 2, "bot 'mc': budget_ms is a number, got 'abc'"),
    Case("play triathlon --players 3 --bot mc,samples=2.5", 2, "samples is a whole number"),
    Case("play triathlon --players 3 --bot mc,budget_ms=nan", 2, "budget_ms is a finite number"),
    Case(f"{TOURNAMENT} --bot m=mc,budget_ms=inf", 2, "budget_ms is a finite number"),
    Case(f"{CONNECT} mc,budget_ms=abc", 2, "budget_ms is a number"),
    # Counts too large to send or to allocate: refused at once, naming the flag and range.
    Case(f"{TOURNAMENT} --deals 99999999999999999999", 2, "--deals: expected a whole number"),
    Case("play hexathlon --bot random --players 100000000", 2, "--players: expected"),
    Case("play hexathlon --bot random --players 100000", 2, ">= 1 and <= 64"),
    Case(f"{TOURNAMENT} --move-ms 0", 2, "a tournament needs a clock"),
    # Every numeric flag of every command.
    Case("demo --matches 0", 2, "--matches: expected a whole number >= 1 and <= 1000"),
    Case("demo --matches 1001", 2, "--matches: expected a whole number >= 1 and <= 1000"),
    Case("play triathlon --bot random --players 0", 2, "--players: expected"),
    Case("play triathlon --bot random --move-ms 0", 2, "--move-ms: expected"),
    Case("play triathlon --bot random --move-ms 3600001", 2, "--move-ms: expected"),
    Case("play triathlon --bot random --move-ms 1e3", 2, "--move-ms: expected a whole number"),
    Case("tournament --players 65", 2, "--players: expected 0 (one per bot) or"),
    Case("tournament --deals 0", 2, "--deals: expected a whole number >= 1 and <= 10000"),
    Case("tournament --concurrency 0", 2, "--concurrency: expected a whole number >= 1"),
    Case("tournament --concurrency 257", 2, "--concurrency: expected a whole number"),
    Case("tournament --move-ms 3600001", 2, "--move-ms: expected"),
    Case("tournament --forfeit-after -1", 2, "--forfeit-after: expected 0 (never) or"),
    Case("tournament --forfeit-after 1001", 2, "--forfeit-after: expected"),
    Case("tournament --bot-cpu-seconds -1", 2, "--bot-cpu-seconds: expected 0 (no limit)"),
    Case("tournament --bot-memory-mb 10", 2, "--bot-memory-mb: expected 0 (no limit) or"),
    Case("tournament --bot-memory-mb 99999999999", 2, "--bot-memory-mb: expected"),
    Case(f"{CONNECT} --cpu-seconds -1 random", 2, "--cpu-seconds: expected 0 (no limit)"),
    Case(f"{CONNECT} --memory-mb 99999999999999 random", 2, "--memory-mb: expected"),
    Case(f"{CONNECT} --give-up-after 0 random", 2, "--give-up-after: expected a number"),
    Case(f"{CONNECT} --give-up-after nan random", 2, "--give-up-after: expected"),
    Case("health --timeout 0", 2, "--timeout: expected a number of seconds > 0"),
    Case("health --timeout inf", 2, "--timeout: expected a number of seconds"),
    Case("health --timeout nan", 2, "--timeout: expected a number of seconds"),
    Case("audit --workers 0", 2, "--workers: expected a whole number >= 1 and <= 256"),
    Case("audit --workers 100000", 2, "--workers: expected"),
    Case("serve --metrics-port 65536", 2, "--metrics-port: a port is 0..65535"),
    Case("serve --lease-seconds 0.1", 2, "--lease-seconds: a lease lasts 0.5..300 seconds"),
    Case("serve --waiting-expiry -1", 2, "--waiting-expiry: expiry (0: never) is"),
    Case("serve --max-pending-calls 0", 2, "--max-pending-calls: the calls that may wait"),
    Case("serve --watch-streams 0", 2, "--watch-streams: the streams an address may hold"),
    # Every --server: HOST:PORT, port 1..65535, IPv6 in brackets (gRPC would dial 443, or
    # another port, instead).
    Case("health --server 127.0.0.1:99999", 2, "--server: a port is 1..65535, got '99999'"),
    Case("health --server 127.0.0.1", 2, "--server: expected HOST:PORT, got '127.0.0.1'"),
    Case("health --server ::1:50051", 2, "an IPv6 address goes in brackets"),
    Case("health", 2, "--server: expected HOST:PORT", env=(("CARDARENA_SERVER", "h"),)),
    Case("log keys --server 127.0.0.1:0", 2, "--server: a port is 1..65535"),
    Case("log fetch --server [::1:5 --match m", 2, "--server: expected [IPv6]:PORT"),
    Case("audit --server 127.0.0.1:http --match m", 2, "--server: a port is 1..65535"),
    Case("replay --server 127.0.0.1 --match m", 2, "--server: expected HOST:PORT"),
    Case(f"{CONNECT} --server 127.0.0.1:65536 random", 2, "--server: a port is 1..65535"),
    Case("tournament --server 10.0.0.1:1,10.0.0.2:0", 2, "--server: a port is 1..65535"),
    Case("serve --listen ::1:5", 2, "--listen: an IPv6 address goes in brackets"),
    # A dead server, named within seconds; a bot's connection gives up when told.
    Case(TOURNAMENT, 1, f"no server answers at {DEAD}"),
    Case(f"log fetch --server {DEAD} --match m", 2, f"no server answers at {DEAD}"),
    Case(f"log keys --server {DEAD}", 2, f"no server answers at {DEAD}"),
    Case(f"{CONNECT} --server {DEAD} --give-up-after 1 random", 1, f"no server answers at {DEAD}"),
    Case(f"health --server {DEAD}", 2, f"{DEAD} (server): UNAVAILABLE"),
    # A port in use (a second server on this machine), naming the port and the flag.
    Case(f"{SERVE} --metrics-port {{busy}}", 1, "(--metrics-port {busy}; -1 for none"),
    Case(f"{SERVE} --metrics-port -1 --web 127.0.0.1:{{busy}}", 1, "(--web 127.0.0.1:{busy})"),
    Case(
        "serve --data-dir {tmp}/data --listen 127.0.0.1:{busy} --metrics-port -1",
        1,
        "port {busy} is in use",
    ),
    Case(SERVE, 1, "(--metrics-port {busy};", env=(("CARDARENA_METRICS_PORT", "{busy}"),)),
    # Help: what each command takes, with its defaults.
    Case("log keys --help", 0, "Print the server's public keys", absent="--results"),
    Case("log fetch --help", 0, "Write match logs as files"),
    Case("bot connect --help", 0, "Connect to a server's tournament (or ladder) as the"),
    Case("tournament --help", 0, "deal seeds, each in every rotation, 1..10000 (default: 2)"),
    Case("tournament --help", 0, "matches played at once, 1..256 (default: 4)"),
    Case("demo --help", 0, "1..1000 (default: 1)"),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """What the cases' placeholders stand for: a good log, a folder, a port in use."""
    folder = tmp_path_factory.mktemp("hostile")
    log = folder / "good.json"
    play = ["play", "triathlon", "--bot", "random", "--players", "3", "--seed", SEED]
    subprocess.run(
        [str(CARDARENA), *play, "--log", str(log), "--quiet"],
        check=True,
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield {"log": str(log), "tmp": str(folder), "busy": str(busy.getsockname()[1])}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.argv} -> {c.code}" for c in CASES])
def test_hostile_input_is_one_line_and_an_exit_status(
    case: Case, places: dict[str, str], tmp_path: Path
) -> None:
    if case.stdout == FULL and not Path(FULL).exists():
        pytest.skip("no /dev/full here")
    argv = [part.format(**places) for part in shlex.split(case.argv)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDARENA_")}
    env |= {"COLUMNS": "200", "CARDARENA_ENTRANT_KEY": "k" * 43}
    env |= {name: value.format(**places) for name, value in case.env}
    with Path(case.stdout or os.devnull).open("wb") as full:
        done = subprocess.run(
            [str(CARDARENA), *argv],
            check=False,
            stdout=full if case.stdout else subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
            env=env,
            timeout=TIMEOUT_S,
        )
    out = (done.stdout or b"").decode(errors="replace")
    err = done.stderr.decode(errors="replace")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert done.returncode == case.code, err
    says = case.says.format(**places)
    if case.code == 0:
        assert says in out
    else:
        lines = err.strip().splitlines()
        assert lines, "nothing said"
        assert says in lines[-1], err
    if case.absent:
        assert case.absent not in out + err
