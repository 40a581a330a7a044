"""Tournaments: bots against each other on a server, with duplicate deals, standings, ratings.

The rules (who sits where on which seed, what a match counts for, standings, ratings) are
:mod:`cardarena.competition`'s, shared with the server. The parts here, in the order a
tournament uses them: :mod:`.botspec` (who plays), :mod:`.config`, :mod:`.runner` and
:mod:`.match` (playing the schedule), :mod:`.guard` and :mod:`.faults` (a misbehaving bot
costs a counted fault, never the tournament), :mod:`.outcomes`, :mod:`.ranking` (the results
ranked by the rules), :mod:`.reports` and :mod:`.progress`.
"""

from cardarena.competition import Standing

from .botspec import BotEntry, check_bot, check_unique, make_python_bot, parse_bot
from .config import TournamentConfig, TournamentError
from .outcomes import MatchResult, TournamentResult
from .ranking import BotStanding
from .runner import play_tournament, run_tournament

__all__ = [
    "BotEntry",
    "BotStanding",
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
