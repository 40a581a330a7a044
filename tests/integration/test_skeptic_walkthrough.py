"""docs/skeptic.md is run, not only read: every shell block of it, in order, against a real
server, with its Python blocks saved under the names their first lines give and the sketch of
docs/rules.md §4.12 saved as ``fairdeal_sketch.py``, as the page tells its reader. Then the
same audit is shown to fail once the results are doctored."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.v1 import tournament_pb2 as tpb

from ..serverproc import ServerProcess

pytestmark = pytest.mark.integration

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"```(sh|python)\n(.*?)```", re.S)
SAVED_AS = re.compile(r"# (\w+\.py) ")


def blocks() -> list[tuple[str, str]]:
    return BLOCK.findall((DOCS / "skeptic.md").read_text())


def sketch() -> str:
    rules = (DOCS / "rules.md").read_text()
    section = rules[rules.index("### 4.12") :]
    found = BLOCK.search(section)
    assert found is not None and found.group(1) == "python"
    return found.group(2)


def shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_skeptics_walkthrough_runs_as_written(tmp_path: Path) -> None:
    found = blocks()
    assert [kind for kind, _ in found].count("sh") >= 8
    work = tmp_path / "skeptic"
    work.mkdir()
    (work / "fairdeal_sketch.py").write_text(sketch())
    with ServerProcess(tmp_path / "data") as server:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "SERVER": server.address,
            "DATA_DIR": str(server.data_dir),
        }
        for number, (kind, text) in enumerate(found, start=1):
            if kind == "python":
                name = SAVED_AS.match(text)
                assert name is not None, f"python block {number} names no file"
                (work / name.group(1)).write_text(text)
                continue
            done = shell(text, work, env)
            assert done.returncode == 0, (number, text, done.stdout, done.stderr)
        audited = json.loads((work / "audit.json").read_text())
        assert audited["ok"] and audited["signature"] == "verified"
        assert (
            "round 1 is the deal its seed gives"
            in shell(
                "python3 check_deal.py logs-json/$(ls logs-json | grep -v tournament | head -1)",
                work,
                env,
            ).stdout
        )

        # The same audit, once the host has favoured its first entrant in the results.
        results = json.loads((work / "results.json").read_text())
        info = tpb.TournamentInfo.FromString(base64.b64decode(results["tournament_info_pb"]))
        info.standings[0].wins += 1
        results["tournament_info_pb"] = base64.b64encode(info.SerializeToString()).decode()
        (work / "results.json").write_text(json.dumps(results))
        doctored = shell(
            "cardarena audit --results results.json --logs logs --key server-key.txt", work, env
        )
        assert doctored.returncode == 1, doctored.stdout
        assert "the results: signature does not verify" in doctored.stdout
        assert "signatures FAILED" in doctored.stdout
