"""The gateway in a process of its own, so that what browsers cost is not the matches' time.

Why: every connection a browser (or a flood of them) opens is accepted, read, admitted or
refused, and proxied by the gateway, and in the server's process all of that ran on the
event loop the players' actions wait for. Measured by ``scripts/bench_flood.py`` (issue 29),
1,100 idle connections reopened 10,000 times a second, or 500 oversized bodies a second,
doubled a victim match's p99. In its own process the gateway costs the server only the
calls it forwards, which go through the server's gRPC port like any client's; and it runs
:data:`NICENESS` steps below the server, so on a busy machine the players come first.

The server binds the listening socket itself (a port taken, or 0 for any, is known and
reported as before) and hands it to the child (``pass_fds``): connections that arrive while
the child starts wait in the socket's backlog, and a child that dies is started again on the
same socket without a moment when the port is closed. The settings, the gateway's secret
among them, go on the child's stdin as one JSON line, never on its command line; the child
writes ``ready`` on stdout once it serves, and exits when its stdin closes (the server
stopped, or died: even ``kill -9`` closes the pipe). It logs on the server's stderr, in the
server's format.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import structlog

from ...hosting.completion import cancel_and_wait, end_child
from ...logs import configure_logging
from ..limits import TrustedProxies
from .gateway import MAX_CONNECTIONS, GrpcWebGateway, listen
from .refusals import FD_MARGIN, MAX_HELD, raise_fd_limit

CHILD: Final = ("-m", "cardarena.server.api.grpcweb.process")
NICENESS: Final = 10
"""How far below the server the gateway runs (Linux's ``nice``): a nice-5 process gets about
a third of the CPU a nice-0 one does when both want it, and all of it when the server rests."""
READY_SECONDS: Final = 30.0
"""How long the child may take to import, open its channel and say ``ready``."""
STOP_SECONDS: Final = 5.0
"""How long a child asked to stop (its stdin closed) may take to close before it is killed."""
RESTART_PAUSES: Final = (0.0, 0.5, 2.0, 5.0, 15.0)
"""Pauses before starting a gateway that died again, the next one each time it dies soon."""
STEADY_SECONDS: Final = 60.0
"""A child that lived this long died of something new: its restart is immediate."""


class GatewayNotStarted(OSError):
    """The gateway's process did not come up; the message says why."""


@dataclass(frozen=True)
class GatewaySettings:
    """What the child needs to build its :class:`GrpcWebGateway`."""

    target: str
    static_dir: Path | None
    client_secret: str | None
    proxies: TrustedProxies
    log_level: str

    def line(self) -> bytes:
        document = {
            "target": self.target,
            "static_dir": None if self.static_dir is None else str(self.static_dir),
            "client_secret": self.client_secret,
            "proxies": ",".join(str(network) for network in self.proxies.networks),
            "log_level": self.log_level,
        }
        return json.dumps(document).encode() + b"\n"

    @classmethod
    def read(cls, line: bytes) -> GatewaySettings:
        document = json.loads(line)
        static_dir = document["static_dir"]
        return cls(
            target=str(document["target"]),
            static_dir=None if static_dir is None else Path(static_dir),
            client_secret=document["client_secret"],
            proxies=TrustedProxies.parse(str(document["proxies"])),
            log_level=str(document["log_level"]),
        )


class GatewayProcess:
    """The server's side: bind, start the child, start it again if it dies, stop it."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.port = 0
        self._socket: socket.socket | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._deaths = 0
        self._log = structlog.get_logger("cardarena.server")

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` and serve there from a child process; the bound port.
        ``OSError`` if the port cannot be bound, :class:`GatewayNotStarted` if the child does
        not say it is ready in time."""
        self._socket = listen(host, port)
        self.port = self._socket.getsockname()[1]
        await self._spawn()
        return self.port

    async def _spawn(self) -> None:
        assert self._socket is not None
        fd = self._socket.fileno()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *CHILD,
            str(fd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            pass_fds=(fd,),
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(self.settings.line())
        try:
            said = await asyncio.wait_for(process.stdout.readline(), READY_SECONDS)
        except TimeoutError:
            said = b""
        if said.strip() != b"ready":
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
            raise GatewayNotStarted(f"the gRPC-Web gateway did not start (exit code {code})")
        self._process = process
        self._watcher = asyncio.create_task(self._watch(process, asyncio.get_running_loop().time()))
        self._log.info("web_gateway_started", pid=process.pid, niceness=NICENESS)

    async def _watch(self, process: asyncio.subprocess.Process, started: float) -> None:
        """Wait for the child to end; unless asked to stop, start it again (a failed start is
        a death too: the pause before the next try grows)."""
        code: int | str = await process.wait()
        loop = asyncio.get_running_loop()
        while True:
            self._deaths = 1 if loop.time() - started >= STEADY_SECONDS else self._deaths + 1
            pause = RESTART_PAUSES[min(self._deaths - 1, len(RESTART_PAUSES) - 1)]
            if self._stopping.is_set():
                return
            self._log.error("web_gateway_died", pid=process.pid, exit_code=code, restart_in_s=pause)
            await asyncio.sleep(pause)
            if self._stopping.is_set():
                return
            started = loop.time()
            try:
                await self._spawn()
                return  # the new child has its own watcher
            except OSError as error:
                code = str(error)

    async def close(self) -> None:
        """Stop the child (its stdin closed; killed if it does not exit in time) and stop
        listening."""
        self._stopping.set()
        if self._process is not None:
            await end_child(self._process, STOP_SECONDS)
        await cancel_and_wait(self._watcher)
        if self._socket is not None:
            self._socket.close()


# The child's side.


async def serve(fd: int) -> None:
    """Read the settings from stdin, serve on the inherited socket ``fd`` until stdin closes."""
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    settings = GatewaySettings.read(await stdin.readline())
    configure_logging(settings.log_level)
    raise_fd_limit(MAX_CONNECTIONS + MAX_HELD + FD_MARGIN)  # room to hold refusals a moment
    gateway = GrpcWebGateway(
        settings.target,
        settings.static_dir,
        client_secret=settings.client_secret,
        proxies=settings.proxies,
    )
    sock = socket.socket(fileno=fd)
    sock.setblocking(False)
    await gateway.serve(sock)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while await stdin.read(1 << 16):
        pass  # nothing more is said: the pipe closing is the message
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(gateway.close(), STOP_SECONDS - 1.0)


def main(argv: list[str] | None = None) -> None:
    """``python -m cardarena.server.api.grpcweb.process FD``. A terminal's Ctrl-C reaches the
    whole process group: the server drains on it and then closes this child's stdin, so the
    child ignores it rather than die first with a traceback."""
    args = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    asyncio.run(serve(int(args[0])))
    sys.stderr.flush()
    os._exit(0)  # nothing of a closed gateway is worth waiting for at interpreter exit


if __name__ == "__main__":
    main()
