"""Headless Chromium for the end-to-end tests: finding it and playwright-core, and running a
Node driver script that prints what it saw as JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAYWRIGHT_VERSION = "1.65.1"
PLAYWRIGHT_INSTALL = (
    "npm install --no-save --no-audit --no-fund --prefix .tools/e2e "
    f"playwright-core@{PLAYWRIGHT_VERSION}"
)


def find_chromium() -> str | None:
    """The browser: ``CARDARENA_CHROMIUM``, else Debian's ``chromium`` on the path."""
    found = os.environ.get("CARDARENA_CHROMIUM") or shutil.which("chromium")
    return found or shutil.which("chromium-browser")


def skip_unless_required(message: str, what: str) -> NoReturn:
    """Skip the test for want of ``what``, or fail it when CI requires the end-to-end tests."""
    if os.environ.get("CARDARENA_REQUIRE_E2E") == "1":
        pytest.fail(f"{message}, and CARDARENA_REQUIRE_E2E=1 requires {what}")
    pytest.skip(message)


def chromium() -> str:
    """The browser, or a skip (a failure when CI requires the end-to-end tests)."""
    found = find_chromium()
    if not found:
        message = "Chromium is not installed (apt-get install -y chromium); the e2e test needs it"
        skip_unless_required(message, "it")
    return found


def playwright_core() -> Path:
    candidates = [
        os.environ.get("CARDARENA_PLAYWRIGHT_CORE", ""),
        str(REPO / ".tools/e2e/node_modules/playwright-core"),
        str(REPO / ".tools/node_modules/playwright-core"),
    ]
    for candidate in filter(None, candidates):
        if (Path(candidate) / "package.json").is_file():
            return Path(candidate)
    pytest.fail(
        f"Chromium is here but playwright-core is not: run `{PLAYWRIGHT_INSTALL}` in {REPO}"
    )


def run_driver(command: list[str]) -> dict[str, Any]:
    """Run a driver script (``node``, the script, playwright-core, Chromium, its arguments):
    it must exit 0; what it printed, as JSON."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"the browser driver failed:\n{done.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result
