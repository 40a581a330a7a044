"""``serve``'s settings read their defaults from the environment: the variable each reads is
the one its help names, and an empty one counts as unset where a setting may be off."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.api.access import Access
from cardarena.server.api.limits import Rate, TrustedProxies
from cardarena.server.app import FULL_COLLECTION_AFTER, ServeConfig
from cardarena.server.cli import FLAGS, Flag, configure, serve, serve_config


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    configure("serve", parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize("flag", FLAGS, ids=[flag.name for flag in FLAGS])
def test_each_setting_reads_the_variable_its_help_names(flag: Flag) -> None:
    assert flag.variable in flag.help


NOT_FLAGS = {"access", "drain_seconds", "web_root"}
"""ServeConfig's fields no flag sets: the nested Access (its own fields have flags) and two
that only an embedding program changes."""


def test_every_field_a_flag_may_set_has_exactly_one_flag() -> None:
    """So a setting added to the config without its flag, or a flag naming a field that is
    not there, fails here rather than silently keeping a default."""
    named = [flag.field for flag in FLAGS]
    settable = [f.name for f in dataclasses.fields(ServeConfig) if f.name not in NOT_FLAGS]
    settable += ["access." + f.name for f in dataclasses.fields(Access)]
    assert sorted(named) == sorted(settable)


def test_the_config_holds_what_each_flag_was_given(tmp_path: Path) -> None:
    config = serve_config(
        parsed(
            "--data-dir", str(tmp_path), "--admin-token", "t" * 32, "--join-rate", "5/s,9",
            "--waiting-expiry", "60", "--max-pending-calls", "77", "--log-level", "debug",
            "--watch-streams", "3", "--trusted-proxies", "10.0.0.0/8,::1",
            "--anonymous-matches", "20,500", "--idle-expiry", "0",
        )
    )  # fmt: skip
    assert config.data_dir == tmp_path
    assert config.access.operator_token == "t" * 32
    assert config.access.join_rate == Rate(5.0, 9)
    assert config.access.create_rate == Access().create_rate
    assert (config.waiting_expiry_seconds, config.max_pending_calls) == (60.0, 77)
    assert config.log_level == "debug"
    assert config.watch_streams == 3
    assert config.trusted_proxies == TrustedProxies.parse("10.0.0.0/8, ::1")
    assert config.access.anonymous_matches == (20, 500)
    assert config.idle_expiry_seconds == 0.0
    assert serve_config(parsed()).idle_expiry_seconds == 3600.0


def test_house_bots_are_off_unless_asked_for_and_their_flags_set_the_config() -> None:
    assert serve_config(parsed()).house_bots == 0
    config = serve_config(parsed("--house-bots", "8", "--house-workers", "2", "--house-idle", "30"))
    assert (config.house_bots, config.house_workers, config.house_idle_seconds) == (8, 2, 30.0)


@pytest.mark.parametrize(
    "argv", [("--house-bots", "-1"), ("--house-workers", "0"), ("--house-idle", "0")]
)
def test_a_bad_house_setting_is_a_usage_error_naming_the_flag(
    argv: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parsed(*argv)
    assert exited.value.code == 2
    assert argv[0] in capsys.readouterr().err


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("256", "PER_ADDRESS,TOTAL"),
        ("0,10", "1..10000000 matches"),
        ("a,10", "a whole number"),
        ("300,200", "more than all together"),
    ],
)
def test_a_bad_anonymous_budget_is_a_usage_error_naming_what_is_wrong(
    given: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parsed("--anonymous-matches", given)
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "--anonymous-matches" in error and named in error


@pytest.mark.parametrize("given", ["0", "-1", "many", "1e9"])
def test_a_bad_stream_cap_is_a_usage_error_naming_the_flag(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parsed("--watch-streams", given)
    assert exited.value.code == 2
    assert "--watch-streams" in capsys.readouterr().err


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
