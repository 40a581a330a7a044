#!/usr/bin/env bash
# Create .venv and install cardarena with its dev tools from the lock (requirements/lock.txt:
# every dependency pinned, with hashes), once; again only when the lock, pyproject.toml or the
# package layout changed (strict editable installs link file by file). A release upstream
# changes nothing here until `bash scripts/lock.sh` refreshes the lock on purpose.
# PYTHON picks the interpreter (default: python3.11, else python3); CARDARENA_VENV the folder.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "cardarena needs Python 3.11 or newer: no python3.11 or python3 on PATH" >&2
    exit 1
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "cardarena needs Python 3.11 or newer (found $("$PYTHON" --version 2>&1))" >&2
    exit 1
}
VENV=${CARDARENA_VENV:-.venv}
LOCK=requirements/lock.txt
stamp=$VENV/.cardarena-installed
want=$( { cat "$LOCK" pyproject.toml; find engine competition server clients proto -name '*.py' -o -name 'py.typed' | sort; } | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV with $("$PYTHON" --version)"
    "$PYTHON" -m venv "$VENV" || {
        echo "could not create $VENV: on Debian or Ubuntu, apt-get install python3-venv (python3.11-venv)" >&2
        exit 1
    }
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing cardarena's locked dependencies into $VENV (about a minute the first time)"
    pip=("$VENV/bin/python" -m pip --disable-pip-version-check --quiet)
    # Exactly the lock: every file checked against its hash, nothing resolved afresh. The
    # build tools first, so that a package published only as source (rlcard) is built by the
    # locked setuptools, not by whatever an isolated build would fetch from PyPI today.
    tools=$(mktemp)
    awk '/^(setuptools|wheel|packaging)==/ {on=1} on {print} on && !/\\$/ {on=0}' "$LOCK" > "$tools"
    "${pip[@]}" install --require-hashes -r "$tools"
    rm -f "$tools"
    "${pip[@]}" install --require-hashes --no-build-isolation -r "$LOCK"
    # cardarena itself, built by the locked setuptools already in the venv.
    "${pip[@]}" install --no-deps --no-build-isolation -e . --config-settings editable_mode=strict
    echo "$want" > "$stamp"
fi
