"""The rules of a competition: schedule, seeds, what a match counts for, standings, ratings,
the crosstable and the sequential test, shared by the server and the clients.

Why a package of its own beside the engine: the server computes live standings and the
clients write reports and audit whole tournaments, from the same rules, and neither may import
the other. Like the engine it is pure (no I/O, clock or global randomness; the standard
library, ``openskill`` and nothing else), which an import-linter contract and
``tests/competition/test_purity.py`` enforce. docs/statistics.md explains every statistic.

The modules, in the order a tournament uses them: :mod:`.schedule` (who sits where on which
seed, the lineups as :mod:`.pairings` designs them), :mod:`.results` (a finished match, :class:`Played`, and what each seat counts for,
:func:`scored`), :mod:`.standings` with :mod:`.stats` and :mod:`.ratings`, :mod:`.crosstable`
and :mod:`.sprt`.
"""

from .crosstable import Pairing, crosstable, paired_differences
from .ladder import Board, Candidate, next_lineup
from .pairings import BALANCED, EVERY, EVERY_LINEUP, GAUNTLET, Design
from .ratings import Rating, rate
from .results import FaultKinds, Played, Scored, group_means, scored
from .schedule import (
    MatchPlan,
    Schedule,
    bot_seed,
    group_seed,
    lineups,
    mixed_seed,
    rotations,
    schedule,
)
from .sprt import MAX_EFFECT, Decision, Sprt
from .standings import Standing, standings
from .stats import mean_interval, t_quantile

__all__ = [
    "BALANCED",
    "EVERY",
    "EVERY_LINEUP",
    "GAUNTLET",
    "MAX_EFFECT",
    "Board",
    "Candidate",
    "Decision",
    "Design",
    "FaultKinds",
    "MatchPlan",
    "Pairing",
    "Played",
    "Rating",
    "Schedule",
    "Scored",
    "Sprt",
    "Standing",
    "bot_seed",
    "crosstable",
    "group_means",
    "group_seed",
    "lineups",
    "mean_interval",
    "mixed_seed",
    "next_lineup",
    "paired_differences",
    "rate",
    "rotations",
    "schedule",
    "scored",
    "standings",
    "t_quantile",
]
