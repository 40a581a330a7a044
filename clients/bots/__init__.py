"""Reference bots, from random to strong. Each sees only its seat's state and legal actions."""

from .base import Bot, load_bot
from .random_bot import RandomBot

__all__ = ["Bot", "RandomBot", "load_bot"]
