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
from collections.abc import Sequence
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
    """The outcome of a match whose log is final (``record.status`` ended): its row if a
    reader kept one, else folded from its log (and kept, once the seed is revealed)."""
    return (await stored_outcomes(store, [record]))[record.match_id]


STORED_BATCH = 500
"""Matches whose rows one read asks for."""


async def stored_outcomes(store: EventStore, records: Sequence[MatchRecord]) -> dict[str, Outcome]:
    """:func:`stored_outcome` of each of ``records``, their rows read a batch at a time: a
    page of ended matches costs a read of rows, not of every log (a log is folded only the
    first time, and its outcome kept once its seed is revealed, since nothing follows)."""
    found: dict[str, Outcome] = {}
    for start in range(0, len(records), STORED_BATCH):
        batch = records[start : start + STORED_BATCH]
        rows = await store.kept_summaries("match", [r.match_id for r in batch])
        fresh: dict[str, bytes] = {}
        for record in batch:
            row = rows.get(record.match_id)
            if row is not None:
                found[record.match_id] = outcome_of_summary(record.match_id, row)
                continue
            outcome = await _folded(store, record)
            found[record.match_id] = outcome
            if outcome.revealed:
                fresh[record.match_id] = summary_of(outcome)
        await store.keep_summaries("match", fresh)
    return found


def summary_of(outcome: Outcome) -> bytes:
    """An outcome as its row keeps it (JSON: exact totals as "p/q", hashes as hex)."""
    return json.dumps(
        {
            "totals": [str(t) for t in outcome.totals],
            "winners": list(outcome.winners),
            "cancelled": outcome.cancelled,
            "faults": list(outcome.faults),
            "forfeited": list(outcome.forfeited),
            "last_hash": outcome.last_hash.hex(),
            "revealed": outcome.revealed,
            "last_seq": outcome.last_seq,
            "kinds": [[k.timeouts, k.refused, k.disconnects] for k in outcome.kinds],
        },
        separators=(",", ":"),
    ).encode()


def outcome_of_summary(match_id: str, raw: bytes) -> Outcome:
    data = json.loads(raw)
    totals = tuple(Fraction(t) if "/" in t else int(t) for t in data["totals"])
    return Outcome(
        match_id=match_id,
        totals=totals,
        winners=tuple(data["winners"]),
        cancelled=bool(data["cancelled"]),
        faults=tuple(data["faults"]),
        forfeited=tuple(bool(f) for f in data["forfeited"]),
        last_hash=bytes.fromhex(data["last_hash"]),
        revealed=bool(data["revealed"]),
        last_seq=int(data["last_seq"]),
        kinds=tuple(FaultKinds(*k) for k in data["kinds"]),
    )


async def _folded(store: EventStore, record: MatchRecord) -> Outcome:
    """The outcome of an ended match, folded from its whole log."""
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
