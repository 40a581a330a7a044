"""The gRPC-Web gateway runs in a process of its own (``server/api/grpcweb/process.py``): what
browsers cost is off the event loop the players wait for, and the gateway comes and goes with
its server.

Each test starts a real ``cardarena serve --web`` and finds the gateway's process by the pid
its server logs (``web_gateway_started``)."""

from __future__ import annotations

import functools
import os
import signal
import socket
from pathlib import Path

import grpc

from cardarena.v1 import service_pb2 as spb

from ..calls import grpc_web
from ..serverproc import ServerProcess, log_records
from ..waiting import wait_until

NICENESS = 10


def gateway_pids(server: ServerProcess) -> list[int]:
    """Every gateway process the server has started, oldest first."""
    return [
        int(record["pid"])
        for record in log_records(server.stderr_path)
        if record.get("event") == "web_gateway_started"
    ]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def ended(pid: int) -> bool:
    return not alive(pid)


def web_port(server: ServerProcess) -> int:
    return int(server.web_address.rsplit(":", 1)[1])


def lists_games(port: int) -> None:
    status, message, messages = grpc_web(port, "ListGames", spb.ListGamesRequest())
    assert status == grpc.StatusCode.OK.value[0], message
    assert spb.ListGamesResponse.FromString(messages[0]).games


def test_the_gateway_serves_from_its_own_process_below_the_servers_priority(
    tmp_path: Path,
) -> None:
    with ServerProcess(tmp_path, web="127.0.0.1:0") as server:
        assert server.process is not None
        lists_games(web_port(server))
        (pid,) = gateway_pids(server)
        assert pid != server.process.pid
        server_niceness = os.getpriority(os.PRIO_PROCESS, server.process.pid)
        expected = min(19, server_niceness + NICENESS)
        assert os.getpriority(os.PRIO_PROCESS, pid) == expected
        # Its settings (the secret that vouches for browsers' addresses) went on a pipe: its
        # command line names the inherited socket only.
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        after = command[command.index(b"cardarena.server.api.grpcweb.process") + 1 :]
        assert len(after) == 2 and after[0].isdigit() and after[1] == b"", command


def test_a_gateway_that_dies_is_started_again_on_the_same_port(tmp_path: Path) -> None:
    with ServerProcess(tmp_path, web="127.0.0.1:0") as server:
        port = web_port(server)
        (first,) = gateway_pids(server)
        os.kill(first, signal.SIGKILL)
        second = wait_until(
            lambda: [pid for pid in gateway_pids(server) if pid != first],
            what="a second gateway process",
        )[0]
        assert alive(second)
        lists_games(port)
        died = [r for r in log_records(server.stderr_path) if r.get("event") == "web_gateway_died"]
        assert died and died[0]["exit_code"] == -signal.SIGKILL


def test_the_gateway_ends_with_its_server_even_a_killed_one(tmp_path: Path) -> None:
    """A gateway outliving its server would hold the web port: the restarted server could not
    listen there again."""
    for stop in ("terminate", "kill"):
        with ServerProcess(tmp_path / stop, web="127.0.0.1:0") as server:
            port = web_port(server)
            (pid,) = gateway_pids(server)
            getattr(server, stop)()
            wait_until(functools.partial(ended, pid), what=f"the gateway to end after {stop}")
            with socket.socket() as sock:  # the port is free again
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
