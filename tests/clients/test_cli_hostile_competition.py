"""Bad and hostile input to ``cardarena tournament``'s actions (``create``, ``status``,
``results``, ``watch``, ``cancel``) and to the settings and secrets they share with the
launcher: test_cli_hostile.py's table, for issue 30's commands, run the same way (the real
entry point in a subprocess, each case bounded by a time-out). Each answer is one line
naming the problem and an exit status (2 a usage error, 1 a server that is not there), never
a traceback; and no secret a case hands the command is ever in what it prints."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_cli_hostile import CARDARENA, DEAD, TIMEOUT_S, Case

SECRET = "s3cr3t-" + "q" * 40
"""The token and creator secret the files below hold: never in any output."""
CREATE = "tournament create --game triathlon --entrant a --entrant b --entrant c"
ONE_OK = f"{CREATE} --invitations -"
DEAD_CREATE = f"{CREATE} --server {DEAD} --admin-token-file {{tmp}}/token"
LAUNCH = "tournament --game triathlon --bot random --bot rules --bot r2=random"

CASES = [
    # The entrants and where their invitations go: refused before any call.
    Case(f"{CREATE}", 2, "say where the invitations go: --invitations DIR"),
    Case("tournament create --game triathlon --entrant a --invitations -", 2, "at least 2"),
    Case("tournament create --entrant a --entrant b --invitations -", 2, "name the game"),
    Case(f"{ONE_OK} --entrant a", 2, "an entrant is named twice: 'a'"),
    Case(f"{ONE_OK} --entrant ''", 2, "--entrant: an entrant's name is 1 to 64 printable"),
    Case(f"{ONE_OK} --entrant '   '", 2, "not only spaces"),
    Case(f"{ONE_OK} --entrant {'x' * 65}", 2, "--entrant: an entrant's name is 1 to 64"),
    Case(f"{CREATE} --invitations /proc/invitations", 2, "cannot create /proc/invitations"),
    Case(f"{CREATE} --invitations {{tmp}}/taken", 2, "exists: an invitation is never written"),
    Case(f"{ONE_OK} --creator-secret-file {{tmp}}/token", 2, "a secret is never written over"),
    Case(f"{ONE_OK} --creator-secret-file /proc/x/secret", 2, "--creator-secret-file: cannot"),
    Case(f"{ONE_OK} --public-address 127.0.0.1", 2, "--public-address: expected HOST:PORT"),
    # Every setting, checked as the server would.
    Case(f"{ONE_OK} --entry-ms 3600001", 2, "--entry-ms: expected 0 (the server's default"),
    Case(f"{ONE_OK} --entry-ms -1", 2, "--entry-ms: expected"),
    Case(f"{ONE_OK} --name {'n' * 101}", 2, "--name: a name is at most 100 printable"),
    Case(f"{ONE_OK} --deals 0", 2, "--deals: expected a whole number >= 1 and <= 10000"),
    Case(f"{ONE_OK} --players 65", 2, "--players: expected 0 (one per entrant) or"),
    Case(f"{ONE_OK} --move-ms 0", 2, "a tournament needs a clock"),
    Case(f"{ONE_OK} --increment-ms 100", 2, "--increment-ms adds to a bank"),
    Case(f"{ONE_OK} --pairing gauntlet", 2, "--pairing gauntlet needs --candidates"),
    Case(f"{ONE_OK} --candidates 1", 2, "--candidates is a gauntlet's"),
    Case(f"{ONE_OK} --pairing swiss", 2, "invalid choice"),
    Case(f"{ONE_OK} --forfeit-after 1001", 2, "--forfeit-after: expected 0 (never) or"),
    Case(f"{ONE_OK} --seed abc", 2, "--seed: a seed is 64 hex digits"),
    Case(f"{ONE_OK} --options '[1]'", 2, "--options: options must be a JSON object"),
    Case(f"{ONE_OK} --sprt a=a", 2, "--sprt: give a=ENTRANT, b=ENTRANT and d1=POINTS"),
    Case(f"{ONE_OK} --sprt a=a,b=z,d1=1", 2, "--sprt: 'z' is not one of the entrants"),
    Case(f"{ONE_OK} --sprt a=a,b=b,d1=nan", 2, "--sprt: d1 is a finite number"),
    Case(f"{ONE_OK} --sprt a=a,b=b,d1=1,d0=1", 2, "--sprt: d1 (1) must be greater than d0"),
    Case(f"{ONE_OK} --sprt a=a,b=b,d1=1,alpha=1", 2, "--sprt: alpha is in (0, 0.5)"),
    Case(ONE_OK + " --sprt '{{\"a\":'", 2, "--sprt: not JSON"),  # {{: a brace, once formatted
    Case(f"{LAUNCH} --sprt a=x,b=rules,d1=1", 2, "--sprt: 'x' is not one of the bots"),
    Case(f"{LAUNCH} --entry-ms 99999999999", 2, "--entry-ms: expected"),
    # A config file: its keys are the flags, its values checked by them.
    Case("tournament create --config {tmp}/bad.toml", 2, "bad.toml: no flag 'entrants'"),
    Case("tournament create --config {tmp}/badsprt.toml", 2, "badsprt.toml: sprt: d1 is a"),
    # Secrets: from a file or the environment, refused without showing them.
    Case(f"{ONE_OK} --admin-token-file {{tmp}}/missing", 2, "cannot read {tmp}/missing"),
    Case(f"{ONE_OK} --admin-token-file {{tmp}}/empty", 2, "{tmp}/empty is empty"),
    Case(f"{ONE_OK} --admin-token-file {{tmp}}/spaced", 2, "does not hold a secret", absent=SECRET),
    Case(
        f"{ONE_OK} --admin-token-file {{tmp}}/token --admin-token {SECRET}",
        2,
        "give the operator token once",
    ),
    Case(
        "tournament cancel t --creator-secret-file {tmp}/spaced",
        2,
        "does not hold a secret",
        absent=SECRET,
    ),
    # The actions: an id, their own flags after them.
    Case("tournament status", 2, "the following arguments are required: ID"),
    Case("tournament status 'a b'", 2, "not a tournament id: 'a b'"),
    Case("tournament results x --json /proc/r.json", 2, "--json: cannot write /proc/r.json"),
    Case("tournament watch x --csv /proc/s.csv", 2, "--csv: cannot write /proc/s.csv"),
    Case(f"tournament cancel x --reason {'r' * 201}", 2, "a reason is at most 200"),
    Case("tournament frob", 2, "invalid choice: 'frob'"),
    Case("tournament --deals 3 create", 2, "--deals before 'create': an action's flags go after"),
    Case(f"tournament --server {DEAD} status x", 2, "--server before 'status'"),
    # A dead server, named within seconds; the invitations folder is never made for it.
    Case(f"{DEAD_CREATE} --invitations {{tmp}}/never", 1, f"no server answers at {DEAD}"),
    Case(f"tournament status x --server {DEAD}", 1, f"no server answers at {DEAD}"),
    Case(f"tournament results x --server {DEAD}", 1, f"no server answers at {DEAD}"),
    Case(f"tournament watch x --server {DEAD} --no-progress", 1, f"no server answers at {DEAD}"),
    Case(
        f"tournament cancel x --server {DEAD} --admin-token-file {{tmp}}/token",
        1,
        f"no server answers at {DEAD}",
        absent=SECRET,
    ),
    # Help: what each action takes.
    Case("tournament --help", 0, "create a tournament for named entrants"),
    Case("tournament create --help", 0, "--invitations DIR"),
    Case("tournament cancel --help", 0, "--creator-secret-file FILE"),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A folder with a token file, files that hold no secret, a taken invitation, and
    config files with a wrong key and a wrong value."""
    folder = tmp_path_factory.mktemp("hostile-competition")
    (folder / "token").write_text(SECRET + "\n")
    (folder / "empty").write_text("")
    (folder / "spaced").write_text(f"{SECRET} {SECRET}\n")
    (folder / "taken").mkdir()
    (folder / "taken" / "b.toml").write_text("")
    (folder / "bad.toml").write_text('game = "triathlon"\nentrants = ["a", "b"]\n')
    (folder / "badsprt.toml").write_text('sprt = { a = "a", b = "b", d1 = "lots" }\n')
    yield {"tmp": str(folder)}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.argv[:90]} -> {c.code}" for c in CASES])
def test_hostile_input_is_one_line_and_an_exit_status(
    case: Case, places: dict[str, str], tmp_path: Path
) -> None:
    argv = [part.format(**places) for part in shlex.split(case.argv)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDARENA_")}
    env |= {"COLUMNS": "200"}
    done = subprocess.run(
        [str(CARDARENA), *argv],
        check=False,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
        env=env,
        timeout=TIMEOUT_S,
    )
    out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert done.returncode == case.code, err
    says = case.says.format(**places)
    if case.code == 0:
        assert says in out
    else:
        lines = err.strip().splitlines()
        assert lines, "nothing said"
        assert says in lines[-1], err
    if case.absent:
        assert case.absent not in out + err
    assert not (Path(places["tmp"]) / "never").exists()
