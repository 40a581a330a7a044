"""Tournaments: bots against each other on a server, with duplicate deals, standings, ratings.

The parts, in the order a tournament uses them: :mod:`.botspec` (who plays), :mod:`.config`,
:mod:`.pairings` (who sits where in which deal), :mod:`.runner` and :mod:`.match` (playing
the schedule), :mod:`.guard` and :mod:`.faults` (a misbehaving bot costs a counted fault,
never the tournament), :mod:`.outcomes`, :mod:`.standings` with :mod:`.stats`,
:mod:`.ratings`, :mod:`.reports` and :mod:`.progress`.
"""

from .botspec import BotEntry, check_bot, check_unique, make_python_bot, parse_bot
from .config import TournamentConfig, TournamentError
from .outcomes import MatchResult, TournamentResult
from .runner import play_tournament, run_tournament
from .standings import Standing

__all__ = [
    "BotEntry",
    "MatchResult",
    "Standing",
    "TournamentConfig",
    "TournamentError",
    "TournamentResult",
    "check_bot",
    "check_unique",
    "make_python_bot",
    "parse_bot",
    "play_tournament",
    "run_tournament",
]
