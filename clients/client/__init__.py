"""The client library: typed asyncio calls to a cardarena server, and the loop that plays a seat.

:class:`ArenaClient` speaks the protocol of ``docs/protocol.md`` over one channel (to one
server or spread over replicas, :mod:`.channel`); :meth:`ArenaClient.play` plays a seat with
any :class:`~cardarena.clients.bots.Bot`. :mod:`.health` is the standard health check.
"""

from .arena import ArenaClient, Ticket, decide_with, new_secret
from .channel import CHANNEL_OPTIONS, Unreachable, channel_target, check_address
from .seatplay import Abstain, Decide
from .tournaments import Entrant, StopRule, TournamentCalls

__all__ = [
    "CHANNEL_OPTIONS",
    "Abstain",
    "ArenaClient",
    "Decide",
    "Entrant",
    "StopRule",
    "Ticket",
    "TournamentCalls",
    "Unreachable",
    "channel_target",
    "check_address",
    "decide_with",
    "new_secret",
]
