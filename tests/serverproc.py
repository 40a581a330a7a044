"""``cardarena serve`` in a subprocess on 127.0.0.1:0 for a test: started with bounded waits,
killed at the end, its JSON log readable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .waiting import wait_until

CARDARENA = Path(sys.executable).parent / "cardarena"
START_TIMEOUT = 20.0
"""How long a server may take to say where it listens."""


class ServerProcess:
    """``cardarena serve`` in a subprocess; ``address`` (and ``web_address`` with ``web``,
    ``metrics_port`` with ``metrics``) once it listens. ``cardarena`` is the command, by
    default this interpreter's (another venv's, to test an installed wheel)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        listen: str = "127.0.0.1:0",
        web: str | None = None,
        metrics: bool = False,
        extra: Sequence[str] = (),
        cardarena: Path = CARDARENA,
    ) -> None:
        self.cardarena = cardarena
        self.data_dir = data_dir
        self.extra = list(extra)
        self.listen = listen
        self.web = web
        self.metrics = metrics
        self.web_address = ""
        self.metrics_port = 0
        self.term_sent = 0.0
        self.process: subprocess.Popen[str] | None = None
        self.address = ""
        self.stderr_path = data_dir / "server.log"

    def start(self) -> ServerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self.stderr_path.open("a") as stderr:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [
                    str(self.cardarena),
                    "serve",
                    "--listen",
                    self.listen,
                    "--data-dir",
                    str(self.data_dir),
                    "--metrics-port",
                    "0" if self.metrics else "-1",
                    *(["--web", self.web] if self.web is not None else []),
                    *self.extra,
                ],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "CARDARENA_LOG_LEVEL": "info"},
            )
        assert self.process.stdout is not None
        self.address = self._announced(self.process.stdout, "listening on", "server")
        if self.web is not None:
            self.web_address = self._announced(self.process.stdout, "web on", "web gateway")
        if self.metrics:
            self.metrics_port = self._logged_metrics_port()
        return self

    def _announced(self, stdout: IO[str], words: str, what: str) -> str:
        """The address at the end of the next line on stdout, which must say ``words``."""
        read: list[str] = []  # read on a thread: a line already buffered is seen at once
        reader = threading.Thread(target=lambda: read.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        line = read[0] if read else ""
        if words not in line:
            exited = self.process.poll() if self.process is not None else None
            self.kill()
            # The log itself may be gone with its temporary directory: its end goes with the
            # error, and how the process ended (still silent after the wait, or its exit code).
            tail = (
                self.stderr_path.read_text(errors="replace")[-2000:]
                if self.stderr_path.exists()
                else ""
            )
            how = f"silent for {START_TIMEOUT:.0f} s" if exited is None else f"exited {exited}"
            raise RuntimeError(
                f"{what} did not start ({how}): {line!r}; {self.stderr_path} ends:\n{tail}"
            )
        return line.strip().rsplit(" ", 1)[1]

    def _logged_metrics_port(self) -> int:
        """The ``metrics_port`` of the last "listening" log line (the one of this process)."""

        def listening() -> list[dict[str, Any]]:
            return [r for r in log_records(self.stderr_path) if r.get("event") == "listening"]

        last = wait_until(listening, what=f"a 'listening' log line in {self.stderr_path}")[-1]
        port = last["metrics_port"]
        assert isinstance(port, int) and port > 0, last
        return port

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def terminate(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(20)

    def signal_term(self) -> None:
        """Send SIGTERM without waiting: the caller watches the drain."""
        assert self.process is not None
        self.term_sent = time.monotonic()
        self.process.send_signal(signal.SIGTERM)

    def wait_exit(self, seconds: float) -> int:
        assert self.process is not None
        return self.process.wait(seconds)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()


def log_records(path: Path) -> list[dict[str, Any]]:
    """The server's stderr as JSON objects; a line that is not one fails the test."""
    records = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON log line: {line!r}") from None
        assert isinstance(record, dict), line
        records.append(record)
    return records
