#!/usr/bin/env bash
# Refresh the locks: resolve every direct and transitive dependency afresh, for every Python
# from 3.11 on and every platform (uv's universal resolution), with the hash of every file.
#   requirements/lock.txt         everything scripts/bootstrap.sh installs (all extras, the build
#                                 backend, pip and uv themselves)
#   requirements/lock-server.txt  the server alone, at the same versions (deploy/Dockerfile)
# Then reinstall .venv from the new lock and regenerate the protobuf code with the generator it
# pins, so that the committed code and the lock change together. Run it on purpose, review the
# diff, run the test command, commit all three.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
uv=.venv/bin/uv
# What pyproject.toml cannot say: the build backend of [build-system] (installed into .venv so
# that the editable install needs no isolated build environment), pip, and this script's uv.
tools=$(printf '%s\n' "pip" "setuptools>=77" "wheel" "uv")
compile=("$uv" pip compile --upgrade --universal --python-version 3.11 --generate-hashes --quiet
    --custom-compile-command "bash scripts/lock.sh")
echo "$tools" | "${compile[@]}" pyproject.toml - --all-extras -o requirements/lock.txt
"${compile[@]}" pyproject.toml --constraints requirements/lock.txt -o requirements/lock-server.txt
bash scripts/bootstrap.sh
bash scripts/gen_proto.sh
git status --short requirements proto
