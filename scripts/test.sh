#!/usr/bin/env bash
# The whole test suite and every static check, exactly as CI runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff";          ruff check . && ruff format --check .
echo "== mypy --strict"; mypy
echo "== import contract"; lint-imports
echo "== protocol";      bash scripts/proto_check.sh
echo "== pytest";        pytest "$@"
