"""House bots: the server seats its own reference bots and plays them to the match's end.

The rooms: :mod:`.spec` (what a house seat is: its bot, its name, its token derived from the
match's seed, and the checks of a request's ask), :mod:`.seats` (the house seats of this
server's matches, bounded, handed out, given up; the unattended practice match ended) and
:mod:`.workers` (the processes that play them, as clients of this server). Off unless the
operator turns it on: ``serve --house-bots N`` (docs/server.md, "House bots").
"""

from __future__ import annotations

from .seats import IDLE_SECONDS, MAX_SEATS, MAX_WORKERS, HouseBots, HouseSettings, Plan
from .spec import BOTS, MAX_MC_BUDGET_MS, MC_BUDGET_MS, HouseBot

__all__ = [
    "BOTS",
    "IDLE_SECONDS",
    "MAX_MC_BUDGET_MS",
    "MAX_SEATS",
    "MAX_WORKERS",
    "MC_BUDGET_MS",
    "HouseBot",
    "HouseBots",
    "HouseSettings",
    "Plan",
]
