"""Start a real server process on 127.0.0.1:0 for a test, and talk to it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import grpc

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import service_pb2_grpc

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

CARDARENA = Path(sys.executable).parent / "cardarena"


class ServerProcess:
    """``cardarena serve`` in a subprocess; ``address`` once it listens."""

    def __init__(
        self,
        data_dir: Path,
        *,
        listen: str = "127.0.0.1:0",
        web: str | None = None,
        extra: Sequence[str] = (),
    ) -> None:
        self.data_dir = data_dir
        self.extra = list(extra)
        self.listen = listen
        self.web = web
        self.web_address = ""
        self.process: subprocess.Popen[str] | None = None
        self.address = ""
        self.stderr_path = data_dir / "server.log"

    def start(self) -> ServerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        stderr = self.stderr_path.open("a")
        self.process = subprocess.Popen(
            [
                str(CARDARENA),
                "serve",
                "--listen",
                self.listen,
                "--data-dir",
                str(self.data_dir),
                "--metrics-port",
                "-1",
                *(["--web", self.web] if self.web is not None else []),
                *self.extra,
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, "CARDARENA_LOG_LEVEL": "info"},
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 20
        line = self.process.stdout.readline()
        if "listening on" not in line or time.monotonic() > deadline:
            self.kill()
            raise RuntimeError(f"server did not start: {line!r}; see {self.stderr_path}")
        self.address = line.strip().rsplit(" ", 1)[1]
        if self.web is not None:
            line = self.process.stdout.readline()
            if "web on" not in line:
                self.kill()
                raise RuntimeError(f"web gateway did not start: {line!r}; see {self.stderr_path}")
            self.web_address = line.strip().rsplit(" ", 1)[1]
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def terminate(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(20)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()


def stub(channel: grpc.aio.Channel) -> MatchServiceAsyncStub:
    return service_pb2_grpc.MatchServiceStub(channel)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def first_snapshot(
    api: MatchServiceAsyncStub, match_id: str, seat: int | None, token: str = ""
) -> pb.Snapshot:
    """Open a stream, take its snapshot, close it."""
    if seat is None:
        watch = api.WatchMatch(spb.WatchMatchRequest(match_id=match_id, after_seq=1 << 62))
        async for watched in watch:
            watch.cancel()
            return watched.snapshot
    else:
        stream = api.StreamEvents(
            spb.StreamEventsRequest(match_id=match_id, seat=seat, after_seq=1 << 62),
            metadata=auth(token),
        )
        async for message in stream:
            stream.cancel()
            return message.snapshot
    raise AssertionError("stream ended without a snapshot")


async def play_to_end(
    api: MatchServiceAsyncStub,
    match_id: str,
    tokens: list[str],
    *,
    max_actions: int = 5000,
) -> int:
    """Play the lowest legal action for whoever is to act until the match ends; return actions."""
    actions = 0
    while actions < max_actions:
        spectator = await first_snapshot(api, match_id, None)
        if spectator.over:
            return actions
        seat = spectator.to_act
        snap = await first_snapshot(api, match_id, seat, tokens[seat])
        request = spb.SubmitActionRequest(
            match_id=match_id,
            seat=seat,
            action=snap.legal_actions[0],
            expected_seq=snap.seq,
            request_id=f"a{actions}",
        )
        await api.SubmitAction(request, metadata=auth(tokens[seat]), timeout=10)
        actions += 1
    raise AssertionError("match did not end")


async def seat_bot(
    api: MatchServiceAsyncStub,
    match_id: str,
    seat: int,
    token: str,
    acknowledged: dict[str, int],
    *,
    after_seq: int = 0,
) -> None:
    """Play one seat from its event stream: answer each YourTurn with its lowest legal action.

    Records the highest acknowledged ``seq`` per match in ``acknowledged``. Ends with the match.
    """
    stream = api.StreamEvents(
        spb.StreamEventsRequest(match_id=match_id, seat=seat, after_seq=after_seq),
        metadata=auth(token),
    )
    async for message in stream:
        kind = message.WhichOneof("kind")
        if kind == "snapshot" and message.snapshot.over:
            return
        turn = None
        if kind == "your_turn":
            turn = (message.your_turn.seq, message.your_turn.legal_actions)
        elif kind == "snapshot" and message.snapshot.legal_actions:
            turn = (message.snapshot.seq, message.snapshot.legal_actions)
        if turn is None:
            continue
        seq, legal = turn
        try:
            done = await api.SubmitAction(
                spb.SubmitActionRequest(
                    match_id=match_id,
                    seat=seat,
                    action=legal[0],
                    expected_seq=seq,
                    request_id=f"s{seat}q{seq}",
                ),
                metadata=auth(token),
                timeout=10,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.ABORTED:
                continue  # a newer YourTurn is on its way
            raise
        acknowledged[match_id] = max(acknowledged.get(match_id, 0), done.last_seq)
