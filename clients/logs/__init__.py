"""Match logs as data: files, a fetch from a server, events in words.

A log is the server's ``GetMatchLogResponse`` as it came (:mod:`.files`, :mod:`.fetch`);
:mod:`.text` says events in the card codes people read. The auditor and the replays read logs
from here.
"""

from .fetch import fetch_log
from .files import LogUnavailable, load_log, save_log

__all__ = ["LogUnavailable", "fetch_log", "load_log", "save_log"]
