"""cardarena's clients: the client library, bots, tournaments, the auditor, replays, the command.

The rooms, each a sub-package, from the bottom up (the import contract in pyproject.toml
holds each to the rooms below it, and all of them away from the server):

* :mod:`.fields`: named attributes copied as they are (settings, JSON values);
* :mod:`.bots`: what a seat knows (:class:`SeatState`), the :class:`Bot` interface, the
  reference bots, matches in-process (:func:`play`: the log a server would write);
  :mod:`.bots.external` runs programs in any language as bots;
* :mod:`.client`: :class:`ArenaClient`, typed asyncio calls and the loop that plays a seat;
* :mod:`.logs`: match logs as files or fetched; events in words;
* :mod:`.tournament`, :mod:`.audit`, :mod:`.replay`: the applications;
* :mod:`.cli`: the ``cardarena`` command and the main job.

The names below are imported on first use, not with this package, so that a command (or
``cardarena --help``) pays only for the rooms it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as mypy sees them; at run time, __getattr__ imports them
    from .audit import AuditReport, audit_log, audit_response
    from .bots import (
        Bot,
        MonteCarloBot,
        RandomBot,
        RuleBot,
        SeatState,
        load_bot,
        play,
        play_local,
    )
    from .bots.external import ExternalDecider
    from .client import ArenaClient, Ticket, new_secret
    from .logs import LogUnavailable, fetch_log, load_log, save_log
    from .replay import Timeline, build_timeline, html_page, render_text
    from .tournament import (
        BotEntry,
        MatchResult,
        TournamentConfig,
        TournamentError,
        TournamentResult,
        parse_bot,
        play_tournament,
        run_tournament,
    )

_ROOM_OF: dict[str, str] = {
    "ArenaClient": "client",
    "AuditReport": "audit",
    "Bot": "bots",
    "BotEntry": "tournament",
    "ExternalDecider": "bots.external",
    "LogUnavailable": "logs",
    "MatchResult": "tournament",
    "MonteCarloBot": "bots",
    "RandomBot": "bots",
    "RuleBot": "bots",
    "SeatState": "bots",
    "Ticket": "client",
    "Timeline": "replay",
    "TournamentConfig": "tournament",
    "TournamentError": "tournament",
    "TournamentResult": "tournament",
    "audit_log": "audit",
    "audit_response": "audit",
    "build_timeline": "replay",
    "fetch_log": "logs",
    "html_page": "replay",
    "load_bot": "bots",
    "load_log": "logs",
    "new_secret": "client",
    "parse_bot": "tournament",
    "play": "bots",
    "play_local": "bots",
    "play_tournament": "tournament",
    "render_text": "replay",
    "run_tournament": "tournament",
    "save_log": "logs",
}
"""The room of each public name (a sub-package), imported from there on first use."""

__all__ = [
    "ArenaClient",
    "AuditReport",
    "Bot",
    "BotEntry",
    "ExternalDecider",
    "LogUnavailable",
    "MatchResult",
    "MonteCarloBot",
    "RandomBot",
    "RuleBot",
    "SeatState",
    "Ticket",
    "Timeline",
    "TournamentConfig",
    "TournamentError",
    "TournamentResult",
    "audit_log",
    "audit_response",
    "build_timeline",
    "fetch_log",
    "html_page",
    "load_bot",
    "load_log",
    "new_secret",
    "parse_bot",
    "play",
    "play_local",
    "play_tournament",
    "render_text",
    "run_tournament",
    "save_log",
]


def __getattr__(name: str) -> Any:
    room = _ROOM_OF.get(name)
    if room is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{room}"), name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
