"""Starting and stopping the server processes (and py-spy on one of them).

Why: every server under test runs in a process of its own on 127.0.0.1:0 and must stop by
itself however the run ends: ``cardarena serve`` (SQLite in a fresh data dir, or a replica of a
PostgreSQL store), or the no-op ceiling (the entry script with ``--noop-server``). A server is
ready once it has printed its ``listening on`` line; its metrics port, if any, is read back
from its JSON log.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from .common import CARDARENA, ENTRY, LOOPBACK, Kind

SERVER_START_TIMEOUT = 30.0


@dataclasses.dataclass(frozen=True)
class ServerProc:
    """One running server process: its address and (0: none) its metrics port."""

    process: subprocess.Popen[str]
    address: str
    metrics_port: int


def server_command(kind: Kind, workdir: Path, match_actions: int, store: str | None) -> list[str]:
    if kind == "noop":
        return [
            sys.executable,
            str(ENTRY),
            "--noop-server",
            "--noop-match-actions",
            str(match_actions),
        ]
    # No per-address limits on creating and joining, nor on the matches an address may hold:
    # every match of the load (up to 5,000) comes from one address, and the benchmark
    # measures play, not the limiter.
    command = [
        str(CARDARENA),
        "serve",
        "--listen",
        f"{LOOPBACK}:0",
        "--log-level",
        "info",
        "--create-rate",
        "0",
        "--join-rate",
        "0",
        "--anonymous-matches",
        "10000000,10000000",
    ]
    if kind == "postgres":
        assert store is not None
        # Port 0: each replica's metrics on a port of its own, read back from its log.
        return [*command, "--store", store, "--metrics-port", "0"]
    # Metrics on a port of its own (it costs nothing per action: the counters are kept
    # anyway), so the report can say how long commits and actions took inside the server.
    return [*command, "--data-dir", str(workdir / "data"), "--metrics-port", "0"]


def metrics_port_in(log_path: Path) -> int:
    """The ``metrics_port`` of the server's JSON ``listening`` log line (0 if not there)."""
    with contextlib.suppress(OSError):
        for line in log_path.read_text().splitlines():
            if '"event": "listening"' in line:
                with contextlib.suppress(ValueError, AttributeError):
                    return int(json.loads(line).get("metrics_port") or 0)
    return 0


def await_listening(
    process: subprocess.Popen[str], log_path: Path, kind: str, timeout: float
) -> str:
    """The address of the server's first stdout line (``... listening on HOST:PORT``), read
    within ``timeout`` seconds; else ``RuntimeError`` with the end of its log."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], max(0.0, timeout))
    line = process.stdout.readline() if ready else ""
    if "listening on" not in line:
        tail = "".join(log_path.read_text().splitlines(keepends=True)[-15:])
        raise RuntimeError(f"the {kind} server did not start ({line!r}); its log ends:\n{tail}")
    return line.strip().rsplit(" ", 1)[1]


def stop_process(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.contextmanager
def server_processes(
    kind: Kind, workdir: Path, match_actions: int, count: int = 1, store: str | None = None
) -> Iterator[list[ServerProc]]:
    """Start ``count`` servers of ``kind`` on 127.0.0.1:0 (several only for ``postgres``:
    replicas of one store); yield them once each has printed its address.

    Each runs in a session of its own, so a Ctrl-C reaches only this script, which then stops
    them in order (SIGTERM, their drain, SIGKILL after 30 s)."""
    processes: list[tuple[subprocess.Popen[str], Path]] = []
    try:
        for index in range(count):
            log_path = workdir / f"{kind}-{index}.log"
            with log_path.open("w") as log:
                process = subprocess.Popen(
                    server_command(kind, workdir, match_actions, store),
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                    start_new_session=True,
                )
            processes.append((process, log_path))
        servers: list[ServerProc] = []
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        for process, log_path in processes:
            address = await_listening(process, log_path, kind, deadline - time.monotonic())
            servers.append(ServerProc(process, address, metrics_port_in(log_path)))
        yield servers
    finally:
        for process, _ in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _ in processes:
            stop_process(process)


def find_py_spy() -> str | None:
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


def start_py_spy(svg: Path, pid: int, window: float) -> subprocess.Popen[bytes]:
    py_spy = find_py_spy()
    assert py_spy is not None  # checked with the arguments
    command = [
        py_spy,
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(max(1, int(window))),
        "--rate",
        "200",
        "--output",
        str(svg),
        "--format",
        {".txt": "raw", ".json": "speedscope"}.get(svg.suffix, "flamegraph"),
        "--nonblocking",
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
