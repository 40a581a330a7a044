#!/usr/bin/env bash
# An OPTIONAL compiled build of the engine's hot modules with mypyc (issue 16), for
# benchmarks and the differential test; the default install never uses it.
#
# Why a separate tree: the pure-Python engine stays the reference and stays importable. This
# copies engine/*.py to build/compiled-engine/cardarena/engine/, compiles the modules listed
# below in that copy, and leaves the rest interpreted there. A process started with
# PYTHONPATH=build/compiled-engine imports that copy as cardarena.engine (a PYTHONPATH entry
# comes before the installed package); every other process imports the pure engine.
# tests/engine/test_compiled_engine.py plays both over every game, player count and option
# variant when the build is present; `CARDARENA_ENGINE=compiled bash scripts/bench.sh`
# benchmarks it.
#
# Needs mypy (the dev extra ships mypyc), gcc and the Python headers. Rebuilds only when an
# engine source changed. Not compiled: the modules off the per-action path. The test reads
# MODULES below to check that each of them is an extension module in the build.
set -euo pipefail
cd "$(dirname "$0")/.."

MODULES=(cards decks fairdeal exact tricks match schedule triathlon crazy_sixes traits sixes fantan)
out=build/compiled-engine
stamp=$out/.built-from
# What the build is made from: the module list, the engine, this script, mypyc and Python.
want=$( {
    printf '%s\n' "${MODULES[@]}"
    cat engine/*.py scripts/build_compiled_engine.sh
    .venv/bin/mypyc --version
    .venv/bin/python -VV
} | sha256sum | cut -d' ' -f1)
built=0
if [ -d "$out/cardarena/engine" ]; then
    built=$(find "$out/cardarena/engine" -name '*.so' | wc -l)
fi
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ "$built" -eq "${#MODULES[@]}" ]; then
    exit 0
fi
echo "compiling the engine with mypyc into $out (${MODULES[*]})" >&2
rm -rf "$out"
mkdir -p "$out/cardarena/engine"
cp engine/*.py engine/py.typed "$out/cardarena/engine/"
start=$(date +%s)
sources=()
for module in "${MODULES[@]}"; do sources+=("cardarena/engine/$module.py"); done
(
    cd "$out"
    ../../.venv/bin/mypyc --explicit-package-bases "${sources[@]}" >mypyc.log 2>&1 || {
        tail -n 30 mypyc.log >&2
        exit 1
    }
)
# The .py copies of compiled modules stay beside their .so: an extension module is imported
# before a source file of the same name, and tracebacks still find the source.
echo "$want" >"$stamp"
echo "compiled in $(($(date +%s) - start)) s" >&2
