#!/usr/bin/env bash
# Create .venv and install cardarena with its dev tools, once; re-install only when the
# package layout or pyproject.toml changed (strict editable installs link file by file).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "cardarena needs Python 3.11 or newer (found $("$PYTHON" --version 2>&1))" >&2
    exit 1
}

EXTRAS=${CARDARENA_EXTRAS:-dev,openspiel,pettingzoo}
stamp=.venv/.cardarena-installed
want=$( { echo "$EXTRAS"; cat pyproject.toml; find engine competition server clients proto -name '*.py' -o -name 'py.typed' | sort; } | sha256sum | cut -d' ' -f1)

if [ ! -x .venv/bin/python ]; then
    echo "creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing cardarena[$EXTRAS] into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check \
        -e ".[$EXTRAS]" --config-settings editable_mode=strict
    echo "$want" > "$stamp"
fi
