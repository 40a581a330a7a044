"""External programs as bots, in any language: JSON lines on stdin and stdout.

:mod:`.protocol` is the line protocol of ``docs/bot-protocol.md`` (messages out, answers in);
:mod:`.process` runs one program per seat per match behind the
:class:`~cardarena.clients.bots.decider.Decider` interface; :mod:`.ahead` starts programs
before their matches, so that a program's start-up is never a move.
"""

from .ahead import MAX_AHEAD, Ahead, Warmth
from .process import STARTUP_S, ExternalDecider, Program
from .protocol import PROTOCOL_VERSION, parse_answer

__all__ = [
    "MAX_AHEAD",
    "PROTOCOL_VERSION",
    "STARTUP_S",
    "Ahead",
    "ExternalDecider",
    "Program",
    "Warmth",
    "parse_answer",
]
