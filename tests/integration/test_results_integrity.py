"""A results file nobody can edit: every field is signed by the server or recomputed by the
auditor, and an edit of any one of them fails ``cardarena audit --results`` naming it.

One real hosted tournament, its results file and its logs, as docs/skeptic.md makes them;
then every readable field is edited in turn (names, means, intervals, ratings, crosstable,
totals, winners, faults, forfeits, options, clocks, the schedule, the seed...), and every
field of the signed message too (re-embedded, with the readable part rewritten to agree,
so that only the signature can catch it).
"""

from __future__ import annotations

import base64
import contextlib
import copy
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.cli import main
from cardarena.clients.logs.results import INFO_FIELD, info_field
from cardarena.clients.tournament.hosted_report import hosted_json
from cardarena.v1 import tournament_pb2 as tpb

from ..serverproc import ServerProcess

pytestmark = pytest.mark.integration

UNSIGNED = {"tournament.server"}
"""The one readable field neither signed nor recomputed: where to fetch the logs from (each
log is pinned to the hash the signed results record)."""


def cardarena(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from cardarena.clients.cli import main; raise SystemExit(main())",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def host_tournament(work: Path, address: str, *, deals: int) -> None:
    """A Triathlon tournament of three reference bots hosted at ``address``: its results.json
    and its logs (``logs/``) in ``work``."""
    cardarena(
        "tournament", "--server", address, "--game", "triathlon",
        "--bot", "random", "--bot", "rules", "--bot", "low=random",
        "--deals", str(deals), "--move-ms", "5000", "--no-progress", "--json", "results.json",
        cwd=work,
    )  # fmt: skip
    cardarena("log", "fetch", "--results", "results.json", "--out", "logs", cwd=work)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A hosted Triathlon tournament's results.json, its logs and the server's key."""
    work = tmp_path_factory.mktemp("results")
    with ServerProcess(work / "data") as server:
        host_tournament(work, server.address, deals=1)
        key = cardarena("serve", "--data-dir", str(work / "data"), "--print-public-key", cwd=work)
        (work / "key.txt").write_text(key)
        (work / "server.txt").write_text(server.address)
        yield work


def audit(work: Path, results: dict[str, Any], *, key: bool = True) -> tuple[int, str]:
    path = work / "edited.json"
    path.write_text(json.dumps(results))
    out = io.StringIO()
    trusted = ["--key", str(work / "key.txt")] if key else []
    with contextlib.redirect_stdout(out):
        code = main(["audit", "--results", str(path), "--logs", str(work / "logs"), *trusted])
    return code, out.getvalue()


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def edited(value: Any) -> Any:
    """Another value of the same kind (a list or a null gains an entry)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "0" if value else "x"
    return [0] if isinstance(value, list) else 0


def put(results: dict[str, Any], path: str, value: Any) -> None:
    steps = path.replace("[", ".[").split(".")
    target: Any = results
    for step in steps[:-1]:
        target = target[int(step[1:-1])] if step.startswith("[") else target[step]
    last = steps[-1]
    if last.startswith("["):
        target[int(last[1:-1])] = value
    else:
        target[last] = value


def test_the_file_as_written_audits_clean(played: Path) -> None:
    results = json.loads((played / "results.json").read_text())
    code, out = audit(played, results)
    assert code == 0, out
    assert "verified" in out


def test_an_edit_of_any_readable_field_fails_the_audit_and_names_it(played: Path) -> None:
    original = json.loads((played / "results.json").read_text())
    readable = {k: v for k, v in original.items() if k != INFO_FIELD}
    fields = [(path, value) for path, value in leaves(readable) if path not in UNSIGNED]
    kinds = {path.split(".")[0].split("[")[0] for path, _ in fields}
    assert {"tournament", "standings", "crosstable", "matches", "results_key_id"} <= kinds
    assert len(fields) > 60
    passed = []
    for path, value in fields:
        results = copy.deepcopy(original)
        put(results, path, edited(value))
        code, out = audit(played, results)
        if code != 1 or path.split("[")[0].split(".")[0] not in out:
            passed.append((path, code, out[-300:]))
    assert not passed, passed


def signed_fields(info: tpb.TournamentInfo) -> Iterator[tuple[str, tpb.TournamentInfo]]:
    """The message with one field changed, for every field at the top and in the first entry
    of each repeated message field (a match, a standing, a pairing): every set field, and every
    plain one left at its default (a standing's win rate of 0 is not "set", but still signed)."""
    for name in fields_of(info):
        if name == "results_signature":
            continue
        forged = tpb.TournamentInfo()
        forged.CopyFrom(info)
        field = forged.DESCRIPTOR.fields_by_name[name]
        if field.message_type is not None and field.is_repeated:
            item = getattr(forged, name)[0]
            for inner in fields_of(item):
                nested = tpb.TournamentInfo()
                nested.CopyFrom(info)
                target = getattr(nested, name)[0]
                _change(target, inner, getattr(target, inner))
                yield f"{name}[0].{inner}", nested
            continue
        if field.message_type is not None:
            target = getattr(forged, name)
            inner, value = target.ListFields()[0]
            _change(target, inner.name, value)
        else:
            _change(forged, name, getattr(forged, name))
        yield name, forged


def fields_of(message: Any) -> list[str]:
    """The names of ``message``'s set fields and of its plain scalars left at their default
    (which ``ListFields`` leaves out: which they are depends on how the tournament went)."""
    names = [field.name for field, _ in message.ListFields()]
    plain = [
        field.name
        for field in message.DESCRIPTOR.fields
        if field.message_type is None
        and not field.is_repeated
        and field.containing_oneof is None
        and field.name not in names
    ]
    return names + plain


def _change(message: Any, name: str, value: Any) -> None:
    if isinstance(value, bool):
        setattr(message, name, not value)
    elif isinstance(value, int | float):
        setattr(message, name, value + 1)
    elif isinstance(value, str):
        setattr(message, name, value + "0")
    elif isinstance(value, bytes):
        setattr(message, name, bytes([value[0] ^ 1]) + value[1:] if value else b"\x01")
    elif hasattr(value, "append"):  # a repeated scalar: change its first entry, or add one
        if len(value) and isinstance(value[0], bytes):
            value[0] = bytes([value[0][0] ^ 1]) + value[0][1:] if value[0] else b"\x01"
        elif len(value) and isinstance(value[0], str):
            value[0] += "0"
        elif len(value) and isinstance(value[0], bool):
            value[0] = not value[0]
        elif len(value) and hasattr(value[0], "ListFields"):  # repeated messages (scores)
            inner, item = value[0].ListFields()[0]
            _change(value[0], inner.name, item)
        elif len(value):
            value[0] += 1
    elif hasattr(value, "keys"):  # a map (a Struct's fields): change its first entry
        entry = value[sorted(value.keys())[0]]
        inner, item = entry.ListFields()[0]
        _change(entry, inner.name, item)
    else:  # a message: change its first set field
        inner, item = value.ListFields()[0]
        _change(value, inner.name, item)


NOT_SIGNED_ENDED = {"status"}
"""A tournament made to look unfinished is refused before its signature is tried."""


def test_an_edit_of_any_signed_field_fails_the_signature(played: Path) -> None:
    original = json.loads((played / "results.json").read_text())
    info = tpb.TournamentInfo.FromString(base64.b64decode(original[INFO_FIELD]))
    server = original["tournament"]["server"]
    forgeries = list(signed_fields(info))
    assert len(forgeries) > 30
    named = {path.split("[")[0] for path, _ in forgeries}
    assert {
        "options",
        "time_control",
        "created_unix_ms",
        "crosstable",
        "matches",
        "standings",
    } <= named
    passed = []
    for path, forged in forgeries:
        results = {**hosted_json(forged, server=server), INFO_FIELD: info_field(forged)}
        code, out = audit(played, json.loads(json.dumps(results)))
        caught = "signature does not verify" in out or path in NOT_SIGNED_ENDED
        if code != 1 or not caught:
            passed.append((path, code, out.splitlines()[0]))
    assert not passed, passed


RECOMPUTED = (
    "standings[0].mean",
    "standings[0].ci_low",
    "standings[0].ci_high",
    "standings[0].win_rate",
    "standings[0].mu",
    "standings[0].sigma",
    "standings[0].ordinal",
    "crosstable[0].mean",
    "crosstable[0].ci_low",
    "crosstable[0].ci_high",
    "options",
    "time_control",
    "fault_policy",
    "players",
)
"""Fields of the signed message the auditor recomputes from the logs (or holds to each log's
own settings), so that an edit is found with no key to check the signature against."""


def test_without_the_key_every_recomputed_field_is_held_to_the_logs(played: Path) -> None:
    """An edit the signature would catch, made where no key is given: "all clean" would then
    say the standings were recomputed when they were not (an adversarial review found the
    order, sigma, intervals, the crosstable and the options and clock taken on trust)."""
    original = json.loads((played / "results.json").read_text())
    info = tpb.TournamentInfo.FromString(base64.b64decode(original[INFO_FIELD]))
    server = original["tournament"]["server"]
    reversed_ = tpb.TournamentInfo()
    reversed_.CopyFrom(info)
    rows = list(reversed_.standings)[::-1]
    del reversed_.standings[:]
    reversed_.standings.extend(rows)
    interval = tpb.TournamentInfo()  # one deal: no interval, so none to change; one made up
    interval.CopyFrom(info)
    made_up = interval.standings[0]
    made_up.ci_low, made_up.ci_high, made_up.has_interval = -1.0, 1.0, True
    forgeries = [(p, f) for p, f in signed_fields(info) if p in RECOMPUTED]
    assert {p for p, _ in forgeries} >= {p for p in RECOMPUTED if ".ci_" not in p}
    passed = []
    extra = [("standings order", reversed_), ("an interval made up", interval)]
    for path, forged in [*forgeries, *extra]:
        forged.ClearField("results_signature")
        results = {**hosted_json(forged, server=server), INFO_FIELD: info_field(forged)}
        code, out = audit(played, json.loads(json.dumps(results)), key=False)
        if code != 1:
            passed.append((path, code, out.splitlines()[:3]))
    assert not passed, passed


def test_a_file_without_its_signed_message_is_held_to_the_servers(played: Path) -> None:
    """Deleting the signed message must not let the readable part go unchecked: the auditor
    then fetches the tournament from the server and holds every readable field to that."""
    results = json.loads((played / "results.json").read_text())
    del results[INFO_FIELD]
    results["standings"][0]["mean"] += 1
    results["tournament"]["finished"] = 999
    path = played / "stripped.json"
    path.write_text(json.dumps(results))
    server = (played / "server.txt").read_text()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["audit", "--results", str(path), "--server", server, "--key", str(played / "key.txt")])  # fmt: skip
    assert code == 1, out.getvalue()
    assert "standings[0].mean" in out.getvalue() and "tournament.finished" in out.getvalue()


def test_a_counted_match_cannot_be_listed_as_cancelled(played: Path) -> None:
    """A match the tournament lists as cancelled (so not counted) must have a log that ends
    cancelled: a signed lie about which matches count is caught without the key too."""
    original = json.loads((played / "results.json").read_text())
    info = tpb.TournamentInfo.FromString(base64.b64decode(original[INFO_FIELD]))
    info.matches[0].cancelled = True
    info.ClearField("results_signature")
    results = {
        **hosted_json(info, server=original["tournament"]["server"]),
        INFO_FIELD: info_field(info),
    }
    path = played / "lying.json"
    path.write_text(json.dumps(results))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["audit", "--results", str(path), "--logs", str(played / "logs")])
    assert code == 1
    assert "lists it as cancelled, its log ends by the rules" in out.getvalue()


def test_a_field_dropped_here_and_there_or_written_twice_is_refused(played: Path) -> None:
    """A field newer writers add may be missing from an older writer's file, everywhere; one
    dropped from a line or two is a finding. A key written twice (a forged table before the
    genuine one: some readers show the first, the auditor read the last) is refused."""
    original = json.loads((played / "results.json").read_text())
    here = copy.deepcopy(original)
    del here["matches"][0]["status"]
    del here["standings"][1]["timeouts"]
    code, out = audit(played, here)
    assert code == 1, out
    assert "matches[0].status is missing" in out and "standings[1].timeouts" in out, out
    older = copy.deepcopy(original)
    for line in older["matches"]:
        del line["status"]
    code, out = audit(played, older)
    assert code == 0, out

    text = (played / "results.json").read_text()
    forged = text.replace('"standings":', '"standings": [], "standings":', 1)
    assert forged != text
    path = played / "twice.json"
    path.write_text(forged)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["audit", "--results", str(path), "--logs", str(played / "logs")])
    assert code == 2 and "'standings' appears twice" in err.getvalue(), err.getvalue()
