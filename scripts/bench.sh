#!/usr/bin/env bash
# Benchmarks: run on purpose, never as tests. Installs the peer (OpenSpiel) on first use.
# CARDARENA_ENGINE=compiled benchmarks the optional mypyc build of the engine's hot modules
# (scripts/build_compiled_engine.sh, built on first use) instead of the pure-Python engine.
set -euo pipefail
cd "$(dirname "$0")/.."
CARDARENA_EXTRAS=dev,bench bash scripts/bootstrap.sh
case "${CARDARENA_ENGINE:-pure}" in
    pure) ;;
    compiled)
        bash scripts/build_compiled_engine.sh
        export PYTHONPATH="$PWD/build/compiled-engine${PYTHONPATH:+:$PYTHONPATH}"
        ;;
    *)
        echo "CARDARENA_ENGINE is pure (the default) or compiled, not ${CARDARENA_ENGINE}" >&2
        exit 2
        ;;
esac
exec .venv/bin/python scripts/bench_engine.py "$@"
