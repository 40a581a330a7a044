#!/usr/bin/env bash
# Regenerate the Python code and typed stubs of proto/cardarena/v1 (committed beside the
# .proto files). `--check` regenerates into a temporary folder and fails if anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=proto
if [ "${1:-}" = "--check" ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
"$PY" -m grpc_tools.protoc -I proto \
    --python_out="$out" --grpc_python_out="$out" \
    --plugin=protoc-gen-mypy="$(dirname "$PY")/protoc-gen-mypy" --mypy_out="$out" \
    --plugin=protoc-gen-mypy_grpc="$(dirname "$PY")/protoc-gen-mypy_grpc" --mypy_grpc_out="$out" \
    proto/cardarena/v1/*.proto 2> >(grep -v "^Writing mypy" >&2)
if [ "${1:-}" = "--check" ]; then
    for f in "$out"/cardarena/v1/*; do
        name=$(basename "$f")
        if ! cmp -s "$f" "proto/cardarena/v1/$name"; then
            echo "proto/cardarena/v1/$name is stale: run bash scripts/gen_proto.sh" >&2
            exit 1
        fi
    done
    echo "generated protobuf code is fresh"
fi
