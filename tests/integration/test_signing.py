"""Signed logs against a real server (issue 14, item 3): a checkpoint with every ended log,
the public keys published, the key made on first start with mode 0600 and kept across a
restart, a rotation that leaves old logs verifiable, and bad keys refused before start."""

from __future__ import annotations

import asyncio
import stat
import subprocess
from pathlib import Path

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from cardarena.v1 import service_pb2 as spb
from cardarena.v1.signed import checkpoint_of, key_id

from ..calls import new_table, play_out, stub
from ..serverproc import CARDARENA, ServerProcess

pytestmark = pytest.mark.integration


async def _played_log(address: str) -> tuple[spb.GetMatchLogResponse, spb.GetPublicKeysResponse]:
    async with grpc.aio.insecure_channel(address) as channel:
        api = stub(channel)
        table = await new_table(api)
        await play_out(api, table)
        log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=table.match_id), timeout=10)
        keys = await api.GetPublicKeys(spb.GetPublicKeysRequest(), timeout=10)
        return log, keys


def _verify(log: spb.GetMatchLogResponse, public: bytes) -> None:
    Ed25519PublicKey.from_public_bytes(public).verify(
        log.checkpoint.signature, checkpoint_of(log.checkpoint)
    )


def _print_key(data_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CARDARENA), "serve", "--data-dir", str(data_dir), "--print-public-key", *extra],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def _key_file(path: Path) -> Path:
    path.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)
    return path


def test_every_ended_log_carries_a_checkpoint_signed_by_a_published_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ServerProcess(data) as server:
        log, keys = asyncio.run(_played_log(server.address))
    key_file = data / "signing-key.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    last = log.entries[-1]
    point = log.checkpoint
    assert (point.match_id, point.last_seq, point.last_hash) == (
        log.match.match_id,
        last.seq,
        last.hash,
    )
    [current] = keys.keys
    assert point.key_id == current.key_id == key_id(current.public_key)
    _verify(log, current.public_key)
    printed = _print_key(data)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == "ed25519:" + current.public_key.hex()
    pem = key_file.read_text()
    assert pem not in (data / "server.log").read_text()  # the private key is never logged
    assert "PRIVATE" not in (data / "server.log").read_text()


def test_a_rotation_keeps_old_logs_verifiable_and_publishes_every_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ServerProcess(data) as server:
        old_log, _ = asyncio.run(_played_log(server.address))
    new_key = _key_file(tmp_path / "new.pem")
    with ServerProcess(data, extra=["--signing-key", str(new_key)]) as server:
        new_log, keys = asyncio.run(_played_log(server.address))

        async def again() -> spb.GetMatchLogResponse:
            async with grpc.aio.insecure_channel(server.address) as channel:
                request = spb.GetMatchLogRequest(match_id=old_log.match.match_id)
                return await stub(channel).GetMatchLog(request, timeout=10)

        old_again = asyncio.run(again())
    current, previous = keys.keys  # the current key first
    assert new_log.checkpoint.key_id == current.key_id != previous.key_id
    assert old_again.checkpoint == old_log.checkpoint  # signed once, by the old key
    assert old_log.checkpoint.key_id == previous.key_id
    _verify(old_again, previous.public_key)
    _verify(new_log, current.public_key)


@pytest.mark.parametrize(
    ("content", "mode", "says"),
    [
        (None, 0o600, "no such file"),
        (b"not a key", 0o600, "not an unencrypted PEM private key"),
        ("generated", 0o644, "others may read it"),
    ],
)
def test_a_bad_signing_key_is_refused_in_one_line_before_start(
    tmp_path: Path, content: bytes | str | None, mode: int, says: str
) -> None:
    path = tmp_path / "key.pem"
    if content == "generated":
        _key_file(path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    if path.exists():
        path.chmod(mode)
    done = _print_key(tmp_path / "data", "--signing-key", str(path))
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    started = subprocess.run(
        [
            str(CARDARENA),
            "serve",
            "--data-dir",
            str(tmp_path / "data"),
            "--listen",
            "127.0.0.1:0",
            "--metrics-port",
            "-1",
            "--signing-key",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert started.returncode == 2 and says in started.stderr
