"""A match's engine rebuilt from its stored log: the log is the truth."""

from __future__ import annotations

import json

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
    return setup(config["game"], players=config["players"], options=config["options"])


def rebuild_engine(record: MatchRecord, stored: list[StoredEvent]) -> tuple[Match, Joins]:
    """Replay the stored log through a fresh match committed to the stored seed, dealt as the
    log deals it (:mod:`.dealing`); with it, who joined and what each contributed."""
    match = engine_setup(record).start(record.seed, dealing=False)
    joins = Joins(record.players)
    for item in stored:
        follow(match, joins, record.seed, pb.Event.FromString(item.payload))
    return match, joins


async def stored_request(store: EventStore, match_id: str, key: str) -> tuple[int, int, int] | None:
    """``(first_seq, last_seq, action)`` of a request the store recorded under ``key``, the
    action read back from the first event it wrote (-1 if that was no action)."""
    seqs = await store.request_result(match_id, key)
    if seqs is None:
        return None
    first, last = seqs
    (stored,) = await store.read_events(match_id, after_seq=first - 1, limit=1)
    recorded = logged_action(pb.Event.FromString(stored.payload))
    return first, last, -1 if recorded is None else recorded
