"""A match's engine rebuilt from its stored log: the log is the truth."""

from __future__ import annotations

import functools
import json
from typing import Final

from cardarena.engine import (
    PASS,
    Match,
)
from cardarena.engine import events as ev
from cardarena.engine.match import MatchSetup, action_of, setup
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from ..store import EventStore, MatchRecord, StoredEvent
from .dealing import Joins, follow


def logged_action(event: pb.Event) -> int | None:
    """The action a log entry records a seat taking (a pass whether forced or not), if any."""
    decoded = codec.event_from_pb(event)
    if isinstance(decoded, ev.Passed):
        return PASS
    recorded = None if decoded is None else action_of(decoded)
    return None if recorded is None else recorded[1]


def engine_setup(record: MatchRecord) -> MatchSetup:
    config = json.loads(record.config)
    return _setup(config["game"], config["players"], json.dumps(config["options"], sort_keys=True))


@functools.lru_cache(maxsize=64)
def _setup(game: str, players: int, options: str) -> MatchSetup:
    """A validated configuration, validated once per distinct one: a restart rebuilds
    thousands of matches of a few configurations, and a setup starts any number of them."""
    return setup(game, players=players, options=json.loads(options))


NO_ACTION: Final = frozenset({"match_started"})
"""Kinds a rebuild need not hand to :func:`follow`, which would decode them only to find no
action: the first entry, the settings (its options are the dearest decode of a log)."""


def rebuild_engine(record: MatchRecord, stored: list[StoredEvent]) -> tuple[Match, Joins]:
    """Replay the stored log through a fresh match committed to the stored seed, dealt as the
    log deals it (:mod:`.dealing`); with it, who joined and what each contributed."""
    return rebuild(record, [pb.Event.FromString(item.payload) for item in stored])


def rebuild(record: MatchRecord, entries: list[pb.Event]) -> tuple[Match, Joins]:
    """:func:`rebuild_engine` from the log's entries, already decoded (once, by a caller that
    needs them too)."""
    match = engine_setup(record).start(record.seed, dealing=False)
    joins = Joins(record.players)
    for entry in entries:
        if entry.WhichOneof("kind") not in NO_ACTION:
            follow(match, joins, record.seed, entry)
    return match, joins


async def action_at(store: EventStore, match_id: str, seq: int) -> int:
    """The action the log entry at ``seq`` records (-1 if it records none): what a request
    read from the store asked for, from the first event it wrote."""
    (stored,) = await store.read_events(match_id, after_seq=seq - 1, limit=1)
    recorded = logged_action(pb.Event.FromString(stored.payload))
    return -1 if recorded is None else recorded
