#!/usr/bin/env bash
# The main job. Until the server lands: random matches of every game and player count,
# played by the engine, printed, and each replayed from its seed to show it verifies.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/cardarena demo "$@"
