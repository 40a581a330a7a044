#!/usr/bin/env bash
# Benchmarks: run on purpose, never as tests. Installs the peer (OpenSpiel) on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
CARDARENA_EXTRAS=dev,bench bash scripts/bootstrap.sh
exec .venv/bin/python scripts/bench_engine.py "$@"
