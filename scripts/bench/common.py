"""The few names every part of the benchmark shares: which server, which bot pattern, where.

Why a module of its own: the server kinds, the loopback address and what one run measures are
used by the processes, the load, the runs, the report and the command line alike; kept here,
none of those imports another just for a name.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Literal

Kind = Literal["durable", "noop", "postgres"]
Pattern = Literal["turns", "play", "replica", "resnapshot"]

LOOPBACK = "127.0.0.1"
CARDARENA = Path(sys.executable).parent / "cardarena"
ENTRY = Path(__file__).resolve().parents[1] / "bench_server.py"
"""The script that runs the no-op server too (``--noop-server``): the benchmark's entry point."""


@dataclasses.dataclass(frozen=True)
class Configuration:
    """What one run measures: ``count`` server processes of ``kind``, named ``label``, the
    clients playing ``pattern`` (``None``: the first of ``--pattern``)."""

    label: str
    kind: Kind
    count: int = 1  # server processes
    pattern: Pattern | None = None
