"""The Node.js client (clients/js) plays and audits a whole match against a real server.

Skipped when ``node`` is not installed, unless ``CARDARENA_REQUIRE_E2E=1`` (CI) makes that a
failure. Installs the client's pinned dependencies with ``npm ci`` when they are missing.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import grpc
import pytest

from cardarena.v1 import service_pb2 as spb

from ..calls import stub
from ..serverproc import ServerProcess

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "js"
SEED = bytes(range(32))  # the fixed seed play_match.js sends


def need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        message = f"`{tool}` is not installed"
        if os.environ.get("CARDARENA_REQUIRE_E2E") == "1":
            pytest.fail(f"{message}, and CARDARENA_REQUIRE_E2E=1 requires it")
        pytest.skip(message)
    return found


def ensure_dependencies() -> None:
    if (CLIENT / "node_modules").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("node is installed but npm is not: cannot install clients/js dependencies")
    done = subprocess.run(
        [npm, "ci", "--silent", "--no-audit", "--no-fund", "--prefix", str(CLIENT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"npm ci failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


async def ended_match(address: str, match_id: str) -> spb.MatchInfo:
    async with grpc.aio.insecure_channel(address) as channel:
        response = await stub(channel).GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)
        return response.match


def test_js_client_plays_and_audits_a_match(server_process: ServerProcess) -> None:
    node = need("node")
    ensure_dependencies()
    started = time.monotonic()
    done = subprocess.run(
        [node, str(CLIENT / "play_match.js"), server_process.address],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "CARDARENA_JS_TIMEOUT_MS": "90000"},
    )
    elapsed = time.monotonic() - started
    output = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, f"play_match.js failed after {elapsed:.1f}s\n{output}"
    assert "log hash chain verified" in done.stdout, output
    assert "seed revealed matches the commitment" in done.stdout, output
    found = re.search(r"^OK match ([0-9a-f]+) pentathlon ended$", done.stdout, re.MULTILINE)
    assert found is not None, output

    # Cross-check from Python: the match the JS client played really ended, with its seed.
    match = asyncio.run(ended_match(server_process.address, found.group(1)))
    assert match.status == spb.MATCH_STATUS_ENDED
    assert match.game == "pentathlon"
    assert match.players == 3
    assert match.seed == SEED
    assert all(seat.taken for seat in match.seats)
    assert f"{match.last_seq} events" in done.stdout, output
