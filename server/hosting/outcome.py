"""What an ended match produced, from memory or read from its log without replaying it.

Why not load the match: a tournament that resumes after a restart needs the results of every
match it had played, thousands perhaps; hosting each one (its engine replayed from the seed,
its readers, its clock) to read a few numbers would make a restart cost the whole history and
keep it all in memory. The totals, winners and cancellation are in the log's closing entries
and the faults are a fold of its entries (:mod:`.faults`), so one read of the stored bytes
gives everything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction

from cardarena.competition import FaultKinds
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from ..store import EventStore, MatchRecord
from .faults import SeatFaults


@dataclass(frozen=True)
class Outcome:
    match_id: str
    totals: tuple[int | Fraction, ...]
    winners: tuple[int, ...]
    cancelled: bool
    faults: tuple[int, ...]
    forfeited: tuple[bool, ...]
    last_hash: bytes
    revealed: bool
    last_seq: int = 0
    kinds: tuple[FaultKinds, ...] = ()
    """Each seat's faults by kind."""


async def stored_outcome(store: EventStore, record: MatchRecord) -> Outcome:
    """The outcome of a match whose log is final (``record.status`` ended), from its log."""
    config = json.loads(record.config)
    faults = SeatFaults(
        record.players,
        forfeit_after=int(config.get("forfeit_after", 0)),
        logged=bool(config.get("tournament")),
    )
    totals: tuple[int | Fraction, ...] = ()
    winners: tuple[int, ...] = ()
    cancelled = revealed = False
    stored = await store.read_events(record.match_id)
    for item in stored:
        entry = pb.Event.FromString(item.payload)
        faults.note(entry)
        kind = entry.WhichOneof("kind")
        if kind == "match_ended":
            totals = tuple(codec.score_from_pb(t) for t in entry.match_ended.totals)
            winners = tuple(entry.match_ended.winners)
        elif kind == "match_cancelled":
            totals = tuple(codec.score_from_pb(t) for t in entry.match_cancelled.totals)
            cancelled = True
        elif kind == "seed_revealed":
            revealed = True
    return Outcome(
        match_id=record.match_id,
        totals=totals,
        winners=winners,
        cancelled=cancelled,
        faults=tuple(faults.counts),
        forfeited=tuple(faults.forfeited),
        last_hash=stored[-1].hash if stored else b"",
        revealed=revealed,
        last_seq=stored[-1].seq if stored else 0,
        kinds=tuple(faults.kinds),
    )
