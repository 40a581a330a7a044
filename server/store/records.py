"""What the store keeps, as Python values: matches, seats, events, leases; and the chain check.

Seeds and token hashes are stored (the server needs them to resume a match and to check a
seat's token) but never appear in a ``repr``, a log line or an error message.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from cardarena.v1.chain import first_break


def now_iso() -> str:
    """The current UTC time in the one text format of ``created_at``/``ended_at``:
    ``2026-11-30T08:00:00.123Z`` (fixed width, so text order is time order)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """One row of ``matches``. ``created_at``/``ended_at`` are ISO-8601 UTC text in one fixed
    format (pagination orders by the text). The seed stays out of ``repr`` so it never leaks
    into a log or a traceback."""

    match_id: str
    created_at: str
    game: str
    players: int
    config: bytes
    seed: bytes = field(repr=False)
    commitment: str
    status: str
    ended_at: str | None = None


@dataclass(frozen=True, slots=True)
class TournamentRecord:
    """One row of ``tournaments``: its settings as JSON (entrant keys only as hashes), its
    seed and the secret its matches' seat credentials derive from, kept out of ``repr``.
    ``status`` is ``running`` or ``ended``."""

    tournament_id: str
    created_at: str
    config: bytes
    seed: bytes = field(repr=False)
    secret: bytes = field(repr=False)
    status: str = "running"
    ended_at: str | None = None
    end_reason: str = ""
    director: str = ""
    """The address of the replica that schedules its matches ("" alone: this process)."""


@dataclass(frozen=True, slots=True)
class LadderRecord:
    """One row of ``ladders``: its settings as JSON (entrant keys only as hashes), and the
    secret its matches' ids, seeds and seat credentials derive from, kept out of ``repr``.
    ``status`` is ``running`` or ``closed``."""

    ladder_id: str
    created_at: str
    config: bytes
    secret: bytes = field(repr=False)
    status: str = "running"
    ended_at: str | None = None
    end_reason: str = ""


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One row of ``seats``; the token hash stays out of ``repr``."""

    match_id: str
    seat: int
    token_hash: bytes = field(repr=False)
    name: str


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One durable event: the exact bytes that are streamed, and their chained hash."""

    match_id: str
    seq: int
    payload: bytes
    hash: bytes


@dataclass(frozen=True, slots=True)
class Answered:
    """A request the store recorded with its writes: its key and the seqs it wrote."""

    request_id: str
    first_seq: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class MatchLog:
    """A match as the store holds it: its row, its taken seats (by seat number) and its whole
    log in order; what resuming it needs."""

    record: MatchRecord
    seats: list[SeatRecord]
    events: list[StoredEvent]
    requests: list[Answered] = field(default_factory=list)
    """Every request recorded with its writes: its key and the seqs it wrote."""


@dataclass(frozen=True, slots=True)
class Owner:
    """A replica as a lease holder: its id (new at every start), the address other replicas
    forward to, and how long its leases last without renewal."""

    replica: str
    address: str
    lease_ms: int


@dataclass(frozen=True, slots=True)
class Fence:
    """What an owner's writes carry: they fail once the lease has another epoch."""

    owner: str
    epoch: int


@dataclass(frozen=True, slots=True)
class Lease:
    """One row of ``leases``; ``live`` is judged by the database's clock, the only clock all
    replicas share."""

    match_id: str
    owner: str
    address: str
    epoch: int
    live: bool

    @property
    def fence(self) -> Fence:
        return Fence(self.owner, self.epoch)


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    """An ended match's signed checkpoint: key ``key_id`` signed its last seq and hash."""

    match_id: str
    last_seq: int
    last_hash: bytes
    key_id: str
    signature: bytes


@dataclass(frozen=True, slots=True)
class PublicKeyRecord:
    """A public key some replica signed with, from ``created_ms`` on (kept for ever)."""

    key_id: str
    public_key: bytes
    created_ms: int


def verify_chain(match_id: str, events: Sequence[StoredEvent]) -> int | None:
    """Recompute a whole log from its payloads; return the first seq where it goes wrong.

    ``events`` must be the log from its first event. Event number *n* (counting from 1) must
    belong to ``match_id``, carry ``seq == n`` and ``hash == chain_hash(hash of n-1, payload)``.
    The result is the *n* of the first event that breaks one of those rules (so a dropped
    event 5 reports 5, as does a swap of events 5 and 6), or ``None`` if all hold. A truncated
    tail cannot be detected from the events alone: compare the length with a trusted last seq.
    """
    for n, event in enumerate(events, start=1):
        if event.match_id != match_id:
            return n
    return first_break(match_id, events)
