"""Match logs as data: files, a fetch from a server, logs built from the engine, events in words.

A log is the server's ``GetMatchLogResponse`` as it came (:mod:`.files`, :mod:`.fetch`), or
as a server would have written it for an engine match (:mod:`.from_engine`); :mod:`.text`
says events in the card codes people read. The auditor and the replays read logs from here.
"""

from .fetch import fetch_log
from .files import LogUnavailable, load_log, save_log
from .from_engine import log_from_engine

__all__ = ["LogUnavailable", "fetch_log", "load_log", "log_from_engine", "save_log"]
