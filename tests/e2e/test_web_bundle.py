"""The web app is built with npm tools: buf with protoc-gen-es generates its typed clients
from proto/ into clients/web/src/gen, esbuild bundles src/ into clients/web/dist. Both are
committed, so a server needs no build at run time and a reader sees what the browser runs.
These tests regenerate and rebuild them into a temporary folder and compare."""

from __future__ import annotations

import fcntl
import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "clients" / "web"
GEN = WEB / "src" / "gen"


def npm_tools() -> None:
    """``npm ci`` in clients/web (the pinned esbuild, buf and protoc-gen-es), once."""
    if shutil.which("npm") is None:
        if os.environ.get("CARDARENA_REQUIRE_E2E") == "1":
            pytest.fail("npm is required (CARDARENA_REQUIRE_E2E=1) but not installed")
        pytest.skip("npm is not installed")
    bins = WEB / "node_modules" / ".bin"
    # Tests on other pytest-xdist workers may want them at the same moment: one installs.
    with (WEB / "package-lock.json").open("rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all((bins / tool).exists() for tool in ("esbuild", "buf", "protoc-gen-es")):
            subprocess.run(
                ["npm", "ci", "--silent", "--no-audit", "--no-fund"],
                cwd=WEB,
                check=True,
                timeout=300,
            )


def differences(left: Path, right: Path) -> list[str]:
    """Files that differ, or are in one tree only, as paths relative to ``left``."""
    found: list[str] = []

    def walk(cmp: filecmp.dircmp[str], prefix: str) -> None:
        found.extend(prefix + name for name in cmp.left_only + cmp.right_only + cmp.funny_files)
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        found.extend(prefix + name for name in mismatch + errors)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(left, right), "")
    return sorted(found)


def test_the_committed_client_code_is_what_buf_generates(tmp_path: Path) -> None:
    npm_tools()
    subprocess.run(
        [
            str(WEB / "node_modules" / ".bin" / "buf"),
            "generate",
            "--template",
            "clients/web/buf.gen.yaml",
            "-o",
            str(tmp_path),
        ],
        cwd=REPO,
        check=True,
        timeout=120,
        capture_output=True,
    )
    stale = differences(GEN, tmp_path / "clients" / "web" / "src" / "gen")
    assert stale == [], (
        f"clients/web/src/gen is stale ({', '.join(stale)}): after changing a .proto file run "
        "`npm run generate --prefix clients/web`, then `npm run build --prefix clients/web`, "
        "and commit both"
    )


def test_the_committed_bundle_is_what_the_sources_build(tmp_path: Path) -> None:
    npm_tools()
    subprocess.run(
        ["node", "build.mjs", str(tmp_path / "dist")],
        cwd=WEB,
        check=True,
        timeout=120,
        capture_output=True,
    )
    stale = differences(WEB / "dist", tmp_path / "dist")
    assert stale == [], (
        f"clients/web/dist is stale ({', '.join(stale)}): run `npm run build` in clients/web "
        "and commit it"
    )
