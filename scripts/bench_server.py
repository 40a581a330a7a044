"""Entry point of the server load benchmark; the benchmark itself is the package ``bench/``.

Why this file stays: it is the command docs/benchmarks.md and the notes of past runs name, and the
no-op server is started as it too. What the benchmark measures and the map of its parts are in
``scripts/bench/__init__.py``; ``--help`` lists the flags.

    .venv/bin/python scripts/bench_server.py [--matches N] [--seconds S] [--replicas 1,2,3]
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # mypy names the modules from the repository root: scripts.bench
    from scripts.bench.cli import main
else:  # run as a script, sys.path[0] is scripts/: the package is the sibling bench
    from bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
