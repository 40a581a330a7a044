"""Hosting matches: one writer per match, persist before publish, resume after a restart.

The rooms: :mod:`.arena` (every hosted match: create, find, load after a restart),
:mod:`.replication` (alone, or as a replica keeping leases and following the others),
:mod:`.match` (one match: its seats, its changes, its clock), :mod:`.following` (a match
following its log), :mod:`.ending` (how it ends), :mod:`.subscribers` (its readers and what
each may see), :mod:`.rebuild` (the engine from the log), :mod:`.dealing` (when a match
deals, from which seed), :mod:`.credentials` (hashes of secrets, ids) and
:mod:`.completion` (work that outlives a cancelled caller).
"""

from __future__ import annotations

from .arena import Arena
from .completion import steady, to_completion
from .credentials import new_match_id, request_key, same_action, secret_hash, token_hash
from .dealing import CONTRIBUTION_BYTES
from .match import HostedMatch, Submitted
from .rebuild import engine_setup, logged_action, rebuild_engine
from .seating import Seat
from .subscribers import (
    SUBSCRIBER_QUEUE,
    Aside,
    PbProjector,
    Subscriber,
    Told,
    ToldBatch,
    ToldRun,
    project_for,
    runs,
)

__all__ = [
    "CONTRIBUTION_BYTES",
    "SUBSCRIBER_QUEUE",
    "Arena",
    "Aside",
    "HostedMatch",
    "PbProjector",
    "Seat",
    "Submitted",
    "Subscriber",
    "Told",
    "ToldBatch",
    "ToldRun",
    "engine_setup",
    "logged_action",
    "new_match_id",
    "project_for",
    "rebuild_engine",
    "request_key",
    "runs",
    "same_action",
    "secret_hash",
    "steady",
    "to_completion",
    "token_hash",
]
