#!/usr/bin/env bash
# The protocol's checks: generated code is fresh, `buf lint` (STANDARD) passes, and
# `buf breaking` finds no incompatible change against the previous commit's protos.
set -euo pipefail
cd "$(dirname "$0")/.."
BUF_VERSION=1.75.0
if [ ! -x .tools/node_modules/.bin/buf ] || [ "$(.tools/node_modules/.bin/buf --version)" != "$BUF_VERSION" ]; then
    npm install --no-save --silent --no-audit --no-fund --prefix .tools "@bufbuild/buf@$BUF_VERSION"
fi
buf=.tools/node_modules/.bin/buf
bash scripts/gen_proto.sh --check
"$buf" lint
echo "buf lint: clean"
if git rev-parse --verify -q HEAD~1 >/dev/null && git cat-file -e HEAD~1:proto/cardarena/v1/service.proto 2>/dev/null; then
    "$buf" breaking --against ".git#ref=HEAD~1"
    echo "buf breaking: no incompatible change since HEAD~1"
fi
