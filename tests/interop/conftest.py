"""The research interfaces' tests need the ``openspiel`` and ``pettingzoo`` extras. The test
command installs them (scripts/bootstrap.sh), so here they are required: a missing one stops
the run with a message saying how to get it, rather than a skip nobody reads."""

from __future__ import annotations

import importlib.util

_MISSING = [
    m for m in ("pyspiel", "pettingzoo", "gymnasium") if importlib.util.find_spec(m) is None
]
if _MISSING:
    raise ImportError(
        f"tests/interop need {', '.join(_MISSING)}: install the extras with "
        "`bash scripts/bootstrap.sh` (or pip install -e '.[dev,openspiel,pettingzoo]')"
    )
