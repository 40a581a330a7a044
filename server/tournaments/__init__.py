"""Tournaments hosted by the server: a layer above hosting, beside nothing else.

The rooms: :mod:`.spec` (the settings), :mod:`.director` (one tournament: scheduling its
matches, collecting results, stopping, or following the replica that directs it),
:mod:`.stoprule` (the SPRT, applied as matches end), :mod:`.entrants` (keys and connected
entrants), :mod:`.info` (what GetTournament shows: standings, crosstable, stop rule) and
:mod:`.registry` (every tournament: create, find, resume, and on replicas the leases). The
statistics themselves are the pure functions of ``cardarena.competition``.
"""

from __future__ import annotations

from .director import Director
from .info import tournament_info
from .registry import Tournaments
from .spec import TournamentSpec

__all__ = ["Director", "TournamentSpec", "Tournaments", "tournament_info"]
