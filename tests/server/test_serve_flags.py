"""``serve``'s settings read their defaults from the environment: the variable each reads is
the one its help names, and an empty one counts as unset where a setting may be off."""

from __future__ import annotations

import argparse
import asyncio
import gc
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.app import FULL_COLLECTION_AFTER
from cardarena.server.cli import FLAGS, Flag, configure, serve


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    configure("serve", parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize("flag", FLAGS, ids=[flag.name for flag in FLAGS])
def test_each_setting_reads_the_variable_its_help_names(flag: Flag) -> None:
    assert flag.variable in flag.help


def test_the_environment_sets_defaults_and_flags_override_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CARDARENA_DATA_DIR", "elsewhere")
    monkeypatch.setenv("CARDARENA_LEASE_SECONDS", "7")
    monkeypatch.setenv("CARDARENA_WEB", "127.0.0.1:8080")
    monkeypatch.setenv("CARDARENA_STORE", "")
    monkeypatch.delenv("CARDARENA_LOG_LEVEL", raising=False)
    args = parsed("--lease-seconds", "9")
    assert args.data_dir == Path("elsewhere")
    assert args.lease_seconds == 9.0
    assert args.web == "127.0.0.1:8080"
    assert args.store is None  # empty: unset, the SQLite store in --data-dir
    assert args.log_level == "info"


@pytest.mark.usefixtures("collector_restored")
def test_serve_tunes_the_collector_before_it_runs_the_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Start-up objects stay out of the server's garbage collections, and full collections
    are rare (app.tune_collector says why)."""
    seen: list[tuple[int, tuple[int, int, int]]] = []

    def run(main: Coroutine[Any, Any, None]) -> None:
        seen.append((gc.get_freeze_count(), gc.get_threshold()))
        main.close()

    monkeypatch.setattr(asyncio, "run", run)
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)  # Python's defaults
    assert serve(parsed("--data-dir", str(tmp_path))) == 0
    [(frozen, (young, middle, full))] = seen
    assert frozen > 1000
    assert (young, middle, full) == (700, 10, FULL_COLLECTION_AFTER)
