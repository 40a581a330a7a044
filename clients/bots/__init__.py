"""Reference bots, from random to strong. Each sees only its seat's state and legal actions."""

from .base import Bot, load_bot
from .montecarlo import MonteCarloBot
from .random_bot import RandomBot
from .rules_bot import RuleBot

__all__ = ["Bot", "MonteCarloBot", "RandomBot", "RuleBot", "load_bot"]
