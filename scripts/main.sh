#!/usr/bin/env bash
# The main job: start a server on 127.0.0.1:0, play a tournament of the reference bots on every
# game (duplicate deals, standings with confidence intervals and ratings), audit every match
# log from the server, stop the server. Exits non-zero on any failure.
# Options: --game G (repeatable), --deals D, --concurrency C, --mc-budget-ms MS, --seed HEX,
# --data-dir DIR (keep the store), --no-progress.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m cardarena.clients.cli.mainjob "$@"
