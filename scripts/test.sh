#!/usr/bin/env bash
# The whole test suite and every static check, exactly as CI runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
# What pip cannot install: Node.js and npm run buf (the protocol's lint, breaking-change and
# generated-code checks) and the web app's build check. Say so before anything runs.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "the test command needs Node.js and npm (buf, the protocol checks, and the web app's" >&2
    echo "checks); on Debian or Ubuntu: apt-get install nodejs npm" >&2
    exit 1
fi
bash scripts/bootstrap.sh
export PATH="$PWD/.venv/bin:$PATH"

# The browser tests drive Debian's Chromium with playwright-core from npm: where both Chromium
# and npm are here, install it (once); elsewhere those tests skip and pytest's summary says why.
PLAYWRIGHT=playwright-core@1.65.1
if command -v chromium >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 \
    && [ ! -d .tools/e2e/node_modules/playwright-core ]; then
    echo "installing $PLAYWRIGHT for the browser tests into .tools/e2e"
    npm install --no-save --silent --no-audit --no-fund --prefix .tools/e2e "$PLAYWRIGHT"
fi
# The web app's pinned npm tools (esbuild, buf, protoc-gen-es: the bundle and generated-code
# freshness checks), from its package-lock.json, once.
if command -v npm >/dev/null 2>&1 && [ ! -x clients/web/node_modules/.bin/protoc-gen-es ]; then
    echo "installing the web app's npm tools into clients/web/node_modules"
    npm ci --silent --no-audit --no-fund --prefix clients/web
fi

# The optional compiled engine (mypyc; about 20 s of CPU, again only after an engine source
# changes), so that its differential test against the pure engine runs: where gcc and the
# Python headers are. Where CI requires it, always, so that a failure says why; elsewhere a
# failed build is reported and its tests skip.
if [ "${CARDARENA_REQUIRE_COMPILED:-}" = 1 ]; then
    bash scripts/build_compiled_engine.sh
elif command -v gcc >/dev/null 2>&1 \
    && [ -f "$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
    bash scripts/build_compiled_engine.sh || echo "the compiled engine did not build: its tests skip" >&2
fi

echo "== ruff";          ruff check . && ruff format --check .
echo "== mypy --strict"; mypy
echo "== import contract"; lint-imports
echo "== protocol";      bash scripts/proto_check.sh
# pytest spreads the test files over the machine's cores (pytest-xdist, at most four workers;
# a file's tests stay on one worker, so that a module's shared server starts once): on the
# 2-core CI machine about half the time of one process. CARDARENA_TEST_WORKERS=0 runs them in
# this process instead (for a debugger, or -x to stop at the first failure in file order).
workers=${CARDARENA_TEST_WORKERS:-$(python -c 'import os; print(min(4, len(os.sched_getaffinity(0))))')}
echo "== pytest ($workers workers)"
pytest -n "$workers" --dist loadfile "$@"
