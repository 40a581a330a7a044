"""A regular install serves the browser app: the wheel carries it as package data.

``serve --web`` once answered 404 on ``pip install .`` because the app was looked up in the
source tree. This test builds the wheel from a copy of the sources, installs it into a fresh
venv as deploy/Dockerfile does (its dependencies exactly as requirements/lock-server.txt pins
them, usually from pip's cache, so the server's lock is shown to be enough), starts that venv's
``cardarena serve --web`` and fetches the page and the bundle; the start-up log must say
where the app is served. About half a minute, most of it pip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.serverproc import ServerProcess, log_records

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "engine", "competition", "server", "clients", "proto")
PIP_TIMEOUT = 300


def pip(python: Path, *args: str) -> None:
    done = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"pip {args[0]} failed:\n{done.stderr[-3000:]}"


def fetch(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status, answer.headers.get("Content-Type", ""), answer.read()


def test_the_installed_wheel_serves_the_web_app(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            ignore = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc", "src")
            shutil.copytree(origin, source / name, ignore=ignore if name == "clients" else None)
        else:
            shutil.copy2(origin, source / name)
    wheels = tmp_path / "wheels"
    # Built by the locked setuptools of the running venv, not whatever an isolated build fetches.
    pip(
        Path(sys.executable),
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(wheels),
        str(source),
    )
    (wheel,) = wheels.glob("cardarena-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    lock = REPO / "requirements" / "lock-server.txt"
    pip(venv / "bin" / "python", "install", "--require-hashes", "-r", str(lock))
    pip(venv / "bin" / "python", "install", "--no-deps", str(wheel))

    command = venv / "bin" / "cardarena"
    with ServerProcess(tmp_path / "data", web="127.0.0.1:0", cardarena=command) as server:
        base = f"http://{server.web_address}"
        status, kind, page = fetch(base + "/")
        assert status == 200 and kind.startswith("text/html")
        script = re.search(rb'src="(dist/app\.[0-9a-f]{12}\.js)"', page)  # by its hash
        assert script is not None, page
        status, kind, bundle = fetch(f"{base}/{script[1].decode()}")
        assert status == 200 and kind == "text/javascript"
        assert bundle == (REPO / "clients" / "web" / "dist" / "app.js").read_bytes()
        served = [r for r in log_records(server.stderr_path) if r.get("event") == "web_app_served"]
        assert served, "the server did not say where it serves the web app"
        assert served[0]["url"] == f"{base}/"
        assert str(venv) in served[0]["root"]  # the installed copy, not the source tree
