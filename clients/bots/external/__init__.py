"""External programs as bots, in any language: JSON lines on stdin and stdout.

:mod:`.protocol` is the line protocol of ``docs/bot-protocol.md`` (messages out, answers in);
:mod:`.process` runs one program per seat per match behind the
:class:`~cardarena.clients.bots.decider.Decider` interface.
"""

from .process import ExternalDecider
from .protocol import PROTOCOL_VERSION, parse_answer

__all__ = ["PROTOCOL_VERSION", "ExternalDecider", "parse_answer"]
