"""The bots' room: what a seat knows, the bot interface, and the reference bots.

Everything here sees only its seat's state and legal actions, needs no network and no
server, and is what the client library, the tournament runner and in-process matches
(:func:`play`, the log a server would write; :func:`play_local`) all drive. External
programs as bots are :mod:`.external`.
"""

from .base import REFERENCE, Bot, load_bot
from .local import play, play_async, play_local
from .montecarlo import MonteCarloBot
from .random_bot import RandomBot
from .rules_bot import RuleBot
from .state import SeatState

__all__ = [
    "REFERENCE",
    "Bot",
    "MonteCarloBot",
    "RandomBot",
    "RuleBot",
    "SeatState",
    "load_bot",
    "play",
    "play_async",
    "play_local",
]
