"""The gRPC face of the server: thin handlers, the one error table, and what guards them.

The rooms: :mod:`.service` (the handlers: check, call the hosting layer, answer),
:mod:`.tournaments` and :mod:`.tournament_requests` (the tournament service's handlers and
their checks),
:mod:`.status` (errors to status codes), :mod:`.requests` (checking what a request carries),
:mod:`.info` (MatchInfo), :mod:`.access` and :mod:`.limits` (the operator token, rate
limits), :mod:`.wire` (registering the service so undecodable bytes are the client's error),
:mod:`.peers` (forwarding to the replica that owns a match) and :mod:`.grpcweb` (the
gRPC-Web gateway for browsers).
"""

from __future__ import annotations

from .access import Access
from .service import MatchService
from .tournaments import TournamentService
from .wire import add_service

__all__ = ["Access", "MatchService", "TournamentService", "add_service"]
