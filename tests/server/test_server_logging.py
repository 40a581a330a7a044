"""The server's logs never carry a secret, not even inside a traceback."""

from __future__ import annotations

import json

import pytest
import structlog

from cardarena.server.logs import configure_logging


def test_tracebacks_leave_out_local_variables(capsys: pytest.CaptureFixture[str]) -> None:
    secret_token = "SEAT-TOKEN-" + "x" * 32
    seed = b"S" * 32
    configure_logging("info")
    try:

        def join(token: str, seed: bytes) -> None:
            raise RuntimeError("the store went away")

        try:
            join(secret_token, seed)
        except RuntimeError:
            structlog.get_logger("test").exception("persist_failed", match_id="m1")
    finally:
        structlog.reset_defaults()
    line = capsys.readouterr().err.strip().splitlines()[-1]
    record = json.loads(line)
    assert record["event"] == "persist_failed" and record["match_id"] == "m1"
    frames = record["exception"][0]["frames"]
    assert any(f["name"] == "join" for f in frames)  # the traceback is there …
    assert secret_token not in line and "SSSS" not in line  # … its frames' locals are not
