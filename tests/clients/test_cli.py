"""The ``cardarena`` command: the engine demo, the games list, and clear refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import structlog

from cardarena.clients.cli import main


def test_demo_plays_and_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--game", "triathlon", "--game", "crazy_sixes", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("replay verified") == 3
    assert "3 matches played and replayed from their seeds: all verified" in out


def test_demo_seed_makes_it_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["demo", "--game", "pentathlon", "--seed", "ab" * 32]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert capsys.readouterr().out == first


def test_games_json_describes_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "--json"]) == 0
    games = json.loads(capsys.readouterr().out)
    assert set(games) == {"pentathlon", "hexathlon", "heptathlon", "crazy_sixes", "triathlon"}
    assert games["triathlon"]["players"] == [3]
    assert games["crazy_sixes"]["options"]["properties"]["deck"]["enum"] == [48, 40]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["demo", "--matches", "0"], "at least 1|>= 1"),
        (["demo", "--seed", "zz"], "64 hex digits"),
        (["demo", "--seed", "ab"], "64 hex digits"),
        (["demo", "--game", "hearts"], "invalid choice"),
        (["nosuchcommand"], "invalid choice"),
        (["tournament", "--server", "10.0.0.1:1,db:2", "--game", "x"], "IPv4 HOST:PORT.*'db:2'"),
        (["audit", "--server", "10.0.0.1:1,,10.0.0.2:x", "--match", "m"], "10.0.0.2:x"),
        (["serve", "--store", "mysql://u:secret@h/db"], r"unknown store 'mysql://u:\*\*\*@h/db'"),
        (["serve", "--lease-seconds", "0.1"], "0.5..300 seconds"),
        (["serve", "--advertise", "nohostport"], "HOST:PORT"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_several_replicas_become_one_round_robin_target() -> None:
    from cardarena.clients.client import channel_target

    assert channel_target("127.0.0.1:5") == "127.0.0.1:5"
    assert channel_target("dns:///replicas:50051") == "dns:///replicas:50051"
    assert channel_target(" 10.0.0.1:1, 10.0.0.2:2 ,") == "ipv4:10.0.0.1:1,10.0.0.2:2"


@pytest.mark.usefixtures("collector_restored")
def test_serve_says_in_one_line_why_it_cannot_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    try:
        # Port 0 and no metrics port: a server left running on the default ports (a README
        # reader's) must not fail this test.
        quiet = ["--listen", "127.0.0.1:0", "--metrics-port", "-1"]
        code = main(["serve", "--store", "postgresql://u:hunter2@127.0.0.1:1/x", *quiet])
        assert code == 1
        err = capsys.readouterr().err
        assert "cannot open postgresql postgresql://u:***@127.0.0.1:1/x" in err
        assert "hunter2" not in err and "Traceback" not in err
        blocked = tmp_path / "file"
        blocked.write_text("")
        assert main(["serve", "--data-dir", str(blocked / "sub"), *quiet]) == 1
        assert "Not a directory" in capsys.readouterr().err
        # An address no interface has: grpcio raises, the command says it in one line.
        unbound = ["serve", "--data-dir", str(tmp_path / "d"), "--metrics-port", "-1"]
        assert main([*unbound, "--listen", "999.1.1.1:5"]) == 1
        err = capsys.readouterr().err
        assert "could not listen on 999.1.1.1:5" in err and "Traceback" not in err
    finally:
        structlog.reset_defaults()


def test_help_lists_every_command_and_imports_none(tmp_path: Path) -> None:
    """``cardarena --help`` names every registered command, the server's ``serve`` too, and
    imports none of their modules: the clients never load the server's code, nor gRPC."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from cardarena.clients.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "light = {'cardarena.clients', 'cardarena.clients.cli', 'cardarena.clients.cli.dispatch'}\n"
        "heavy = ('cardarena.server', 'cardarena.clients.', 'cardarena.engine', 'grpc')\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith(heavy) and m not in light))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    for command in ("audit", "demo", "games", "health", "replay", "serve", "tournament"):
        assert re.search(rf"^    {command}\b", shown, flags=re.MULTILINE), command
    assert "LOADED []" in shown


def test_every_public_name_of_the_clients_resolves() -> None:
    """The package's names are imported on first use; each one named in ``__all__`` is there."""
    from cardarena import clients

    missing = [name for name in clients.__all__ if getattr(clients, name, None) is None]
    assert not missing
