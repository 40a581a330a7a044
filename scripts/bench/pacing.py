"""The schedule of a paced match: open-loop load, so latency is measured honestly.

Why: a closed loop (act as soon as the last answer came) slows down with the server, so a slow
answer delays the next request and hides itself: coordinated omission. With ``--rate R`` each
match instead acts on a fixed schedule, one action every 1/R seconds from a random phase, and
an action's latency runs from its *scheduled* time to its acknowledgement. A server that falls
behind makes every later action of the match late, and all of that lateness is counted. The
turn-based protocol cannot send an action before the seat is prompted, so an action due before
its prompt waits for it, and that wait is counted too; the send-to-acknowledgement time alone
is kept beside it (``service``), so the two can be told apart.
"""

from __future__ import annotations

import asyncio
import random
import time


class Pacer:
    """One match's schedule: the next action is due every ``interval`` seconds from a random
    phase, fixed when the match first acts (not when it was created: setup may take long)."""

    def __init__(self, interval: float, rng: random.Random) -> None:
        self.interval = interval
        self.phase = rng.random() * interval
        self.due: float | None = None

    async def wait(self) -> float:
        """Sleep until the next scheduled action (not at all if it is overdue); its due time
        (``time.perf_counter``), from which its latency is counted."""
        now = time.perf_counter()
        if self.due is None:
            self.due = now + self.phase
        due = self.due
        self.due += self.interval
        if due > now:
            await asyncio.sleep(due - now)
        return due
