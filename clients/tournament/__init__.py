"""Tournaments: bots against each other on a server, with duplicate deals, standings, ratings.

The rules (who sits where on which seed, what a match counts for, standings, ratings) are
:mod:`cardarena.competition`'s, shared with the server, which hosts every tournament
``cardarena tournament`` runs. The parts here: :mod:`.botspec` (who plays),
:mod:`.launcher` (create the tournament, start each bot as its own entrant process, follow
it), :mod:`.entrant` (one entrant's loop, as ``cardarena bot connect`` runs it),
:mod:`.hosted_report` (the server's standings as a table, JSON and CSV), :mod:`.progress`.

The older runner, which schedules the matches itself with every Python bot in its own
process (:mod:`.runner`, :mod:`.match`, :mod:`.guard`, :mod:`.faults`, :mod:`.outcomes`,
:mod:`.ranking`, :mod:`.reports`), is kept as the tournament benchmark's peer and for the
library: no command runs bots that way.
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
