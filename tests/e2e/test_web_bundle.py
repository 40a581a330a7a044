"""The web app is built with npm tools (esbuild); the served bundle in clients/web/dist is
committed, so a server needs no build at run time. This test rebuilds it and compares."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

WEB = Path(__file__).resolve().parents[2] / "clients" / "web"


def test_the_committed_bundle_is_what_the_sources_build(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        if os.environ.get("CARDARENA_REQUIRE_E2E") == "1":
            pytest.fail("npm is required (CARDARENA_REQUIRE_E2E=1) but not installed")
        pytest.skip("npm is not installed")
    if not (WEB / "node_modules" / ".bin" / "esbuild").exists():
        subprocess.run(
            ["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=WEB, check=True, timeout=300
        )
    out = tmp_path / "app.js"
    subprocess.run(
        ["npm", "run", "-s", "build", "--", f"--outfile={out}"],
        cwd=WEB,
        check=True,
        timeout=120,
        capture_output=True,
    )
    assert out.read_bytes() == (WEB / "dist" / "app.js").read_bytes(), (
        "clients/web/dist/app.js is stale: run `npm run build` in clients/web and commit it"
    )
