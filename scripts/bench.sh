#!/usr/bin/env bash
# Benchmarks: run on purpose, never as tests. Installs the peer (OpenSpiel) on first use.
# CARDARENA_ENGINE=compiled benchmarks the optional mypyc build of the engine's hot modules
# (scripts/build_compiled_engine.sh, built on first use) instead of the pure-Python engine.
set -euo pipefail
cd "$(dirname "$0")/.."
engine=${CARDARENA_ENGINE:-pure}
if [ "$engine" != pure ] && [ "$engine" != compiled ]; then
    echo "CARDARENA_ENGINE is pure (the default) or compiled, not $engine" >&2
    exit 2
fi
bash scripts/bootstrap.sh
if [ "$engine" = compiled ]; then
    bash scripts/build_compiled_engine.sh
    export PYTHONPATH="$PWD/build/compiled-engine${PYTHONPATH:+:$PYTHONPATH}"
fi
exec .venv/bin/python scripts/bench_engine.py "$@"
