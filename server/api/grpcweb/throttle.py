"""One log line per condition and interval, however often the condition repeats.

The gateway faces strangers: a flood of one condition (an exhausted file table, a connection
storm, a fuzzer) must not flood stderr as well, nor cost a write per attempt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class LogThrottle:
    """At most one log line per event name and ``interval``: a flood of one condition (an
    exhausted file table, a connection storm, a fuzzer) must not flood stderr as well. The
    next line after the interval says how many were suppressed in between."""

    def __init__(
        self, logger: Any, interval: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def log(self, level: str, event: str, **fields: object) -> None:
        now = self.clock()
        last = self._last.get(event)
        if last is not None and now - last < self.interval:
            self._suppressed[event] = self._suppressed.get(event, 0) + 1
            return
        self._last[event] = now
        suppressed = self._suppressed.pop(event, 0)
        getattr(self.logger, level)(event, suppressed=suppressed, **fields)
