"""The durable event store: one append-only, hash-chained event log per match.

Two databases sit behind this one class: SQLite, embedded, for one process
(:mod:`.sqlite_store`), and PostgreSQL, shared by many replicas (:mod:`.postgres_store`).
Everything that matters is written once, here; a database contributes only how to connect,
its schema, and a few dialect words. Why it is shaped this way:

* **Persist before publish.** Every write method returns only after its transaction has been
  committed durably, so whatever the server acknowledges or streams survives a killed process.
* **One writer thread, group commit.** A commit costs about as much as a hundred small
  inserts, so the writer thread drains everything queued, writes it all in *one* transaction and
  pays one commit for the whole batch. Each request runs inside its own SAVEPOINT, so a refused
  or failing request rolls back alone and fails only its own caller.
* **The event loop never touches the database.** Writes go to the writer thread and reads to a
  small pool of reader threads with their own connections. Reads are single statements.
* **Tamper evidence.** ``hash = SHA-256(prev_hash || payload)`` over the exact stored bytes
  (protobuf serialisation is not canonical, so nothing is ever re-serialised), starting from a
  per-match genesis hash, so a log cannot be moved to another match either.
* **One writer per match, enforced by the data.** ``(match_id, seq)`` is the primary key and an
  append names the seq it expects to follow, so two writers can never fork a log. Between
  replicas a *lease* names each match's owner; an append fenced by a lease fails once another
  replica has taken the lease over (its epoch moved on).
* **Retries are recognised.** A commit can succeed while the acknowledgement is lost. An append
  may carry a request id, recorded in the same transaction as its events; replaying it raises
  :class:`DuplicateRequest` with the original seqs instead of writing twice.

Seeds and token hashes are stored (the server needs them to resume a match and to check a
seat's token) but never appear in a ``repr``, a log line or an error message.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import contextlib
import json
import queue
import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Final, Generic, Self, TypeVar, cast

import structlog

from cardarena.v1.chain import GENESIS_DOMAIN, chain_hash, first_break, genesis_hash

__all__ = [
    "ENDED",
    "GENESIS_DOMAIN",
    "SCHEMA_VERSION",
    "DuplicateRequest",
    "EventStore",
    "Fence",
    "InvalidPageToken",
    "Lease",
    "LeaseLost",
    "MatchRecord",
    "Owner",
    "SeatRecord",
    "StoreClosed",
    "StoreConflict",
    "StoreError",
    "StoredEvent",
    "UnknownMatch",
    "chain_hash",
    "genesis_hash",
    "now_iso",
    "verify_chain",
]

log = structlog.get_logger(__name__)

T = TypeVar("T")

Connection = Any
"""A DB-API style connection (``sqlite3`` or psycopg) whose ``execute`` takes ``?``
placeholders; :mod:`.postgres_store` wraps psycopg's to translate them."""

SCHEMA_VERSION: Final = 1
"""Bumped on any incompatible schema change; a store refuses a database written by a newer one."""

ENDED: Final = "ended"
"""The status :meth:`EventStore.end_match` sets; every other status counts as unfinished."""

CommitHook = Callable[[int, float], None]
"""``on_commit(batch_size, seconds)``: called by the writer thread after every commit."""

ChangeHook = Callable[[str | None, int], None]
"""``on_change(match_id, last_seq)`` from :meth:`EventStore.listen`, on the listener thread;
``(None, 0)`` after a reconnect: changes may have been missed, re-read everything."""


# --------------------------------------------------------------------------- errors


class StoreError(Exception):
    """Base of every error the store raises; also wraps unexpected database errors."""


class StoreClosed(StoreError):
    """The store is not open (never opened, closing, or its writer thread has stopped)."""


class StoreConflict(StoreError):
    """The write contradicts what is stored: a duplicate id, a taken seat, a stale
    ``expected_seq`` (another writer got there first), or a write to an ended match."""


class LeaseLost(StoreConflict):
    """The write was fenced by a lease that another replica has since taken over."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"this replica no longer owns match {match_id!r}")
        self.match_id = match_id


class UnknownMatch(StoreError, KeyError):
    """No match with this id exists. A ``KeyError`` too, so generic lookups can catch it."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"no match {match_id!r}")
        self.match_id = match_id

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0])


class DuplicateRequest(StoreError):
    """This request id was already applied to this match; nothing was written.

    Carries the seqs the original request wrote (and the seat it was recorded for), so the
    server can answer the retry exactly as it answered, or would have answered, the original.
    """

    def __init__(self, first_seq: int, last_seq: int, seat: int | None = None) -> None:
        super().__init__(f"request already applied as events {first_seq}..{last_seq}")
        self.first_seq = first_seq
        self.last_seq = last_seq
        self.seat = seat


class InvalidPageToken(StoreError, ValueError):
    """A page token that this store did not produce: the client's mistake."""


# --------------------------------------------------------------------------- records


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


# --------------------------------------------------------------------------- the chain


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


# --------------------------------------------------------------------------- schema

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    match_id   TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    game       TEXT NOT NULL,
    players    INT  NOT NULL,
    config     {bytes} NOT NULL,
    seed       {bytes} NOT NULL,
    commitment TEXT NOT NULL,
    status     TEXT NOT NULL,
    ended_at   TEXT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_created ON matches (created_at, match_id);
CREATE INDEX IF NOT EXISTS matches_by_status ON matches (status, created_at, match_id);
CREATE TABLE IF NOT EXISTS seats (
    match_id   TEXT NOT NULL,
    seat       INT  NOT NULL,
    token_hash {bytes} NOT NULL,
    name       TEXT NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS events (
    match_id TEXT    NOT NULL,
    seq      {int64} NOT NULL,
    payload  {bytes} NOT NULL,
    hash     {bytes} NOT NULL,
    PRIMARY KEY (match_id, seq)
) {clustered};
CREATE TABLE IF NOT EXISTS requests (
    match_id   TEXT    NOT NULL,
    request_id TEXT    NOT NULL,
    seat       INT     NULL,
    first_seq  {int64} NOT NULL,
    last_seq   {int64} NOT NULL,
    PRIMARY KEY (match_id, request_id)
) {clustered};
CREATE TABLE IF NOT EXISTS leases (
    match_id    TEXT    PRIMARY KEY,
    owner       TEXT    NOT NULL,
    address     TEXT    NOT NULL,
    epoch       {int64} NOT NULL,
    deadline_ms {int64} NOT NULL
);
CREATE INDEX IF NOT EXISTS leases_by_owner ON leases (owner);
CREATE TABLE IF NOT EXISTS peer_secret (
    id     INT     PRIMARY KEY,
    secret {bytes} NOT NULL
);
"""


def schema_statements(*, bytes_type: str, int64: str, clustered: str = "") -> list[str]:
    """The one schema, in a database's words for bytes and 64-bit integers (and SQLite's
    ``WITHOUT ROWID`` for tables read by their primary key), one statement each."""
    text = _SCHEMA.format(bytes=bytes_type, int64=int64, clustered=clustered)
    return [statement for statement in text.split(";") if statement.strip()]


# --------------------------------------------------------------------------- rows and tokens

_MATCH_COLUMNS: Final = (
    "match_id, created_at, game, players, config, seed, commitment, status, ended_at"
)


def _match_from_row(row: tuple[Any, ...]) -> MatchRecord:
    return MatchRecord(
        match_id=row[0],
        created_at=row[1],
        game=row[2],
        players=row[3],
        config=bytes(row[4]),
        seed=bytes(row[5]),
        commitment=row[6],
        status=row[7],
        ended_at=row[8],
    )


def _encode_token(created_at: str, match_id: str) -> str:
    raw = json.dumps([created_at, match_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _decode_token(token: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        decoded = json.loads(raw)
    except (binascii.Error, ValueError, TypeError, RecursionError) as exc:
        raise InvalidPageToken("malformed page token") from exc
    if not (
        isinstance(decoded, list) and len(decoded) == 2 and all(isinstance(x, str) for x in decoded)
    ):
        raise InvalidPageToken("malformed page token")
    return decoded[0], decoded[1]


# --------------------------------------------------------------------------- writer requests


@dataclass(slots=True)
class _Request(Generic[T]):
    """A unit of work for the writer thread and the caller's future to settle with its result."""

    work: Callable[[Connection], T]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[T]


_STOP: Final = object()
"""Queued by :meth:`EventStore.close`: the writer finishes what precedes it, then exits."""


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """Runs on the caller's loop. A caller that was cancelled meanwhile just misses the news
    (the write itself stands: that is what request ids are for)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _answer(request: _Request[Any], result: Any, error: BaseException | None) -> None:
    """Hand a request's outcome to its caller's loop, from the writer thread."""
    # RuntimeError: the caller's loop is closed, so nobody is waiting any more.
    with contextlib.suppress(RuntimeError):
        request.loop.call_soon_threadsafe(_settle, request.future, result, error)


# --------------------------------------------------------------------------- the store


class EventStore(ABC):
    """The event store. Open it once per process; share it across tasks.

    ``on_commit(batch_size, seconds)`` is called on the writer thread after every committed
    transaction, before the callers in that batch are woken (so, once a write has returned, its
    batch has been reported). It must be quick and thread-safe, as Prometheus metrics are; an
    exception in it is logged and otherwise ignored.

    ``max_batch`` caps how many requests share one transaction, which bounds the latency of
    the first request in a very large queue; the rest go into the next transaction at once.
    """

    shared: ClassVar[bool] = False
    """Whether other processes may write to the same database (then leases matter)."""
    _no_limit: ClassVar[object] = -1
    """The ``LIMIT`` parameter that means no limit."""
    _now_ms: ClassVar[str] = ""
    """SQL for the database clock in Unix milliseconds (lease deadlines)."""
    _share_lock: ClassVar[str] = ""
    """The locking clause that keeps a read lease row from changing until commit (none where
    the database serialises writers anyway, as SQLite does)."""

    def __init__(
        self,
        *,
        on_commit: CommitHook | None = None,
        max_batch: int = 1000,
        read_threads: int = 4,
    ) -> None:
        if max_batch < 1 or read_threads < 1:
            raise ValueError("max_batch and read_threads must be at least 1")
        self._on_commit = on_commit
        self._max_batch = max_batch
        self._read_threads = read_threads
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._lock = threading.Lock()  # guards _accepting and the put of _STOP
        self._accepting = False
        self._writer: threading.Thread | None = None
        self._readers: concurrent.futures.ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._read_conns: list[Connection] = []

    # ------------------------------------------------------------------ the database's part

    @property
    @abstractmethod
    def where(self) -> str:
        """The database as error messages name it (never with a password)."""

    @abstractmethod
    def _connect_writer(self) -> Connection:
        """A connection for the writer thread, with the schema created or checked."""

    @abstractmethod
    def _connect_reader(self) -> Connection:
        """A connection for one reader thread (usable from another thread to close it)."""

    @abstractmethod
    def _begin(self, conn: Connection) -> None:
        """Start the batch transaction."""

    @abstractmethod
    def _in_transaction(self, conn: Connection) -> bool:
        """Whether the batch transaction is still open (not aborted by the database)."""

    @abstractmethod
    def _is_unique_violation(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a primary-key or unique violation."""

    @abstractmethod
    def _is_database_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` comes from the database driver."""

    def _is_broken(self, conn: Connection) -> bool:
        """Whether ``conn`` can no longer be used (and should be replaced)."""
        return False

    def _insert_events(
        self,
        conn: Connection,
        events: list[StoredEvent],
        request: tuple[str, int | None] | None,
    ) -> None:
        """Write ``events`` (and the ``(request_id, seat)`` that caused them). A store shared
        between processes also tells the others, at commit, where the match's log ends."""
        conn.executemany(
            "INSERT INTO events (match_id, seq, payload, hash) VALUES (?, ?, ?, ?)",
            [(e.match_id, e.seq, e.payload, e.hash) for e in events],
        )
        if request is not None:
            conn.execute(
                "INSERT INTO requests (match_id, request_id, seat, first_seq, last_seq)"
                " VALUES (?, ?, ?, ?, ?)",
                (events[0].match_id, *request, events[0].seq, events[-1].seq),
            )

    def _savepoint(self, conn: Connection) -> None:
        conn.execute("SAVEPOINT request")

    def _release(self, conn: Connection) -> None:
        conn.execute("RELEASE SAVEPOINT request")

    def _rollback_to_savepoint(self, conn: Connection) -> None:
        conn.execute("ROLLBACK TO SAVEPOINT request")
        conn.execute("RELEASE SAVEPOINT request")

    def listen(self, on_change: ChangeHook) -> None:
        """Call ``on_change`` whenever another process appends (no-op where none can)."""
        return

    def _check_schema_version(self, conn: Connection) -> None:
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        if row[0] is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        elif row[0] > SCHEMA_VERSION:
            raise StoreError(
                f"{self.where} has schema version {row[0]}; this store knows up to {SCHEMA_VERSION}"
            )

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Create or check the schema, start the writer thread and the reader pool."""
        if self._writer is not None:
            raise StoreError("store is already open")
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        jobs: queue.SimpleQueue[object] = queue.SimpleQueue()  # fresh: no stale _STOP
        self._queue = jobs
        self._writer = threading.Thread(
            target=self._writer_main,
            args=(jobs, started),
            name="cardarena-store-writer",
            daemon=True,
        )
        self._writer.start()
        try:
            await asyncio.wrap_future(started)
        except BaseException:  # setup failed, or we were cancelled while it ran
            jobs.put(_STOP)
            await asyncio.to_thread(self._writer.join)
            self._writer = None
            raise
        self._readers = concurrent.futures.ThreadPoolExecutor(
            max_workers=self._read_threads, thread_name_prefix="cardarena-store-reader"
        )
        with self._lock:
            self._accepting = True

    async def close(self) -> None:
        """Refuse new work, let the writer commit everything already queued, then stop.

        Idempotent. Writes already queued complete (and their callers are answered) before
        this returns, which is what a draining server needs.
        """
        with self._lock:
            was_accepting, self._accepting = self._accepting, False
            if was_accepting:
                self._queue.put(_STOP)
        writer, self._writer = self._writer, None
        if writer is not None:
            await asyncio.to_thread(writer.join)
        readers, self._readers = self._readers, None
        if readers is not None:
            await asyncio.to_thread(readers.shutdown, wait=True)
        with self._lock:
            conns, self._read_conns = self._read_conns, []
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._local = threading.local()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ writes

    async def create_match(self, record: MatchRecord, owner: Owner | None = None) -> Fence | None:
        """Insert a new match; :class:`StoreConflict` if its id exists. With an ``owner``, its
        lease is taken in the same transaction (so no other replica can claim the match in
        between) and its fence returned."""

        def work(conn: Connection) -> Fence | None:
            try:
                conn.execute(
                    f"INSERT INTO matches ({_MATCH_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        record.match_id,
                        record.created_at,
                        record.game,
                        record.players,
                        record.config,
                        record.seed,
                        record.commitment,
                        record.status,
                        record.ended_at,
                    ),
                )
            except Exception as exc:
                if self._is_unique_violation(exc):
                    raise StoreConflict(f"match {record.match_id!r} already exists") from exc
                raise
            if owner is None:
                return None
            return self._take_lease(conn, record.match_id, owner).fence

        return await self._submit(work)

    async def set_seat(
        self,
        match_id: str,
        seat: int,
        token_hash: bytes,
        name: str,
        *,
        fence: Fence | None = None,
    ) -> None:
        """Record who sits in ``seat``. :class:`StoreConflict` if it is taken or the match has
        ended, :class:`UnknownMatch` if there is no such match, ``ValueError`` if the seat
        number is outside ``0 <= seat < players``."""

        def work(conn: Connection) -> None:
            players, status = _match_row(conn, match_id)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has ended")
            _check_fence(conn, match_id, fence, self._share_lock)
            self._insert_seat(conn, players, SeatRecord(match_id, seat, token_hash, name))

        await self._submit(work)

    def _insert_seat(self, conn: Connection, players: int, seat: SeatRecord) -> None:
        if not 0 <= seat.seat < players:
            raise ValueError(f"seat {seat.seat} out of range for {players} players")
        try:
            conn.execute(
                "INSERT INTO seats (match_id, seat, token_hash, name) VALUES (?, ?, ?, ?)",
                (seat.match_id, seat.seat, seat.token_hash, seat.name),
            )
        except Exception as exc:
            if self._is_unique_violation(exc):
                raise StoreConflict(
                    f"seat {seat.seat} of match {seat.match_id!r} is taken"
                ) from exc
            raise

    async def append(
        self,
        match_id: str,
        payloads: list[bytes],
        *,
        expected_seq: int,
        request_id: str | None = None,
        seat: int | None = None,
        fence: Fence | None = None,
        join: SeatRecord | None = None,
    ) -> list[StoredEvent]:
        """Append ``payloads`` as events ``expected_seq + 1, expected_seq + 2, …``, durably.

        ``expected_seq`` must be the current last seq (:class:`StoreConflict` otherwise): the
        guard that makes a second writer of one match fail instead of forking its log; the
        primary key ``(match_id, seq)`` backs it up against a writer in another process. With a
        ``request_id`` the request is recorded in the same transaction as its events, and a
        repeat of it raises :class:`DuplicateRequest` with the original seqs, writing nothing;
        that check comes first, so a retry carrying its original, now stale, ``expected_seq``
        is recognised rather than refused as a conflict. With a ``fence``, the append fails with
        :class:`LeaseLost` unless that lease is still current. With ``join``, that seat is
        taken in the same transaction (its event and its row are never seen one without the
        other); a taken seat is a :class:`StoreConflict`. Appending to an ended match or
        an unknown one fails (:class:`StoreConflict`, :class:`UnknownMatch`).

        If the caller is cancelled while waiting, the append may still have been committed.
        """
        if not payloads:
            raise ValueError("append needs at least one payload")
        if expected_seq < 0:
            raise ValueError("expected_seq must be >= 0")
        blobs = [bytes(p) for p in payloads]

        def work(conn: Connection) -> list[StoredEvent]:
            # Everything the append must check, in one statement: one round trip to a server.
            # The lease row is read with a share lock where the database has one: a take-over
            # then waits for this append to commit, and reads the log with it.
            state = conn.execute(
                "SELECT m.players, m.status, r.first_seq, r.last_seq, r.seat,"
                f" (SELECT epoch FROM leases WHERE match_id = ? AND owner = ?{self._share_lock}),"
                " t.seq, t.hash"
                " FROM matches m"
                " LEFT JOIN requests r ON r.match_id = m.match_id AND r.request_id = ?"
                " LEFT JOIN (SELECT seq, hash FROM events WHERE match_id = ?"
                "            ORDER BY seq DESC LIMIT 1) t ON 1 = 1"
                " WHERE m.match_id = ?",
                (
                    match_id,
                    None if fence is None else fence.owner,
                    request_id,
                    match_id,
                    match_id,
                ),
            ).fetchone()
            if state is None:
                raise UnknownMatch(match_id)
            players, status, first_done, last_done, seat_done, epoch, tail_seq, tail_hash = state
            if first_done is not None:
                raise DuplicateRequest(first_done, last_done, seat_done)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has ended")
            if fence is not None and epoch != fence.epoch:
                raise LeaseLost(match_id)
            last = 0 if tail_seq is None else tail_seq
            if last != expected_seq:
                raise StoreConflict(
                    f"match {match_id!r} is at seq {last}, not the expected {expected_seq}"
                )
            if join is not None:
                self._insert_seat(conn, players, join)
            prev = genesis_hash(match_id) if tail_hash is None else bytes(tail_hash)
            events = []
            for seq, payload in enumerate(blobs, start=expected_seq + 1):
                prev = chain_hash(prev, payload)
                events.append(StoredEvent(match_id, seq, payload, prev))
            request = None if request_id is None else (request_id, seat)
            try:
                self._insert_events(conn, events, request)
            except Exception as exc:
                if self._is_unique_violation(exc):  # another process got there first
                    raise StoreConflict(
                        f"match {match_id!r} moved past seq {expected_seq} meanwhile"
                    ) from exc
                raise
            return events

        return await self._submit(work)

    async def end_match(self, match_id: str, ended_at: str, *, fence: Fence | None = None) -> None:
        """Mark a match ended (its log is then final) and drop its lease. :class:`UnknownMatch`
        if there is no such match, :class:`StoreConflict` if it has already ended."""

        def work(conn: Connection) -> None:
            _players, status = _match_row(conn, match_id)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has already ended")
            _check_fence(conn, match_id, fence, self._share_lock)
            conn.execute(
                "UPDATE matches SET status = ?, ended_at = ? WHERE match_id = ?",
                (ENDED, ended_at, match_id),
            )
            conn.execute("DELETE FROM leases WHERE match_id = ?", (match_id,))

        await self._submit(work)

    # ------------------------------------------------------------------ leases

    async def acquire_lease(self, match_id: str, owner: Owner) -> Lease:
        """Take the match's lease if it is free, expired or already ``owner``'s; return the
        lease as it stands afterwards (someone else's if it was live). Taking it from another
        owner moves the epoch on, which fences that owner's writes off. :class:`UnknownMatch`
        if there is no such match, :class:`StoreConflict` if it has ended."""

        def work(conn: Connection) -> Lease:
            _players, status = _match_row(conn, match_id)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has ended")
            return self._take_lease(conn, match_id, owner)

        return await self._submit(work)

    def _take_lease(self, conn: Connection, match_id: str, owner: Owner) -> Lease:
        now = self._now_ms
        conn.execute(
            "INSERT INTO leases (match_id, owner, address, epoch, deadline_ms)"
            f" VALUES (?, ?, ?, 1, {now} + ?)"
            " ON CONFLICT (match_id) DO UPDATE SET"
            "  epoch = CASE WHEN leases.owner = excluded.owner THEN leases.epoch"
            "          ELSE leases.epoch + 1 END,"
            "  owner = excluded.owner, address = excluded.address,"
            "  deadline_ms = excluded.deadline_ms"
            f" WHERE leases.owner = excluded.owner OR leases.deadline_ms < {now}",
            (match_id, owner.replica, owner.address, owner.lease_ms),
        )
        lease = _lease_row(conn, match_id, now)
        assert lease is not None  # the statement above made sure there is a row
        return lease

    async def get_lease(self, match_id: str) -> Lease | None:
        """The match's lease, or ``None`` if nobody holds one."""
        return await self._read(lambda conn: _lease_row(conn, match_id, self._now_ms))

    async def renew_leases(self, owner: Owner) -> set[str]:
        """Push every lease ``owner`` holds ``lease_ms`` into the future; return the ids of the
        matches it still holds (a lease taken over meanwhile is not renewed, and not listed)."""

        def work(conn: Connection) -> set[str]:
            rows = conn.execute(
                f"UPDATE leases SET deadline_ms = {self._now_ms} + ? WHERE owner = ?"
                " RETURNING match_id",
                (owner.lease_ms, owner.replica),
            ).fetchall()
            return {r[0] for r in rows}

        return await self._submit(work)

    async def release_leases(self, owner: Owner) -> int:
        """Give up every lease ``owner`` holds (a draining replica); return how many."""

        def work(conn: Connection) -> int:
            rows = conn.execute(
                "DELETE FROM leases WHERE owner = ? RETURNING match_id", (owner.replica,)
            ).fetchall()
            return len(rows)

        return await self._submit(work)

    async def release_lease(self, match_id: str, owner: Owner) -> None:
        """Give up one lease, if ``owner`` holds it."""

        def work(conn: Connection) -> None:
            conn.execute(
                "DELETE FROM leases WHERE match_id = ? AND owner = ?", (match_id, owner.replica)
            )

        await self._submit(work)

    async def orphaned_matches(self, limit: int = 100) -> list[str]:
        """Unfinished matches that nobody holds a live lease on, oldest first: what a replica
        should take over (their owner died or drained)."""

        def work(conn: Connection) -> list[str]:
            rows = conn.execute(
                "SELECT m.match_id FROM matches m LEFT JOIN leases l ON l.match_id = m.match_id"
                f" WHERE m.status != ? AND (l.match_id IS NULL OR l.deadline_ms < {self._now_ms})"
                " ORDER BY m.created_at, m.match_id LIMIT ?",
                (ENDED, limit),
            ).fetchall()
            return [r[0] for r in rows]

        return await self._read(work)

    # ------------------------------------------------------------------ reads

    async def get_match(self, match_id: str) -> MatchRecord | None:
        """The match's row, or ``None``."""

        def work(conn: Connection) -> MatchRecord | None:
            row = conn.execute(
                f"SELECT {_MATCH_COLUMNS} FROM matches WHERE match_id = ?", (match_id,)
            ).fetchone()
            return None if row is None else _match_from_row(row)

        return await self._read(work)

    async def list_matches(
        self, *, status: str | None = None, page_size: int, page_token: str | None = None
    ) -> tuple[list[MatchRecord], str | None]:
        """One page of matches in ``(created_at, match_id)`` order, optionally of one status.

        Keyset pagination: the token names the last row returned, so pages stay exact while
        matches are being created (no skips, no repeats, unlike OFFSET). The token is opaque
        text; ``None`` as the next token means this was the last page.
        """
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        after = None if page_token is None else _decode_token(page_token)

        def work(conn: Connection) -> tuple[list[MatchRecord], str | None]:
            where: list[str] = []
            args: list[object] = []
            if status is not None:
                where.append("status = ?")
                args.append(status)
            if after is not None:
                where.append("(created_at, match_id) > (?, ?)")
                args.extend(after)
            sql = f"SELECT {_MATCH_COLUMNS} FROM matches"
            if where:
                sql += " WHERE " + " AND ".join(where)
            sql += " ORDER BY created_at, match_id LIMIT ?"
            rows = conn.execute(sql, (*args, page_size + 1)).fetchall()
            page = [_match_from_row(r) for r in rows[:page_size]]
            more = len(rows) > page_size
            return page, (_encode_token(page[-1].created_at, page[-1].match_id) if more else None)

        return await self._read(work)

    async def unfinished_matches(self) -> list[MatchRecord]:
        """Every match not ended, oldest first: what a restarting server must replay."""

        def work(conn: Connection) -> list[MatchRecord]:
            rows = conn.execute(
                f"SELECT {_MATCH_COLUMNS} FROM matches WHERE status != ?"
                " ORDER BY created_at, match_id",
                (ENDED,),
            ).fetchall()
            return [_match_from_row(r) for r in rows]

        return await self._read(work)

    async def get_seats(self, match_id: str) -> list[SeatRecord]:
        """The taken seats of a match, by seat number (empty for an unknown match)."""

        def work(conn: Connection) -> list[SeatRecord]:
            rows = conn.execute(
                "SELECT match_id, seat, token_hash, name FROM seats WHERE match_id = ?"
                " ORDER BY seat",
                (match_id,),
            ).fetchall()
            return [SeatRecord(r[0], r[1], bytes(r[2]), r[3]) for r in rows]

        return await self._read(work)

    async def read_events(
        self, match_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``seq > after_seq`` in order, at most ``limit`` of them: what a client
        resuming from its last seq needs. Only committed events are ever visible."""
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0")

        def work(conn: Connection) -> list[StoredEvent]:
            rows = conn.execute(
                "SELECT seq, payload, hash FROM events WHERE match_id = ? AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (match_id, after_seq, self._no_limit if limit is None else limit),
            ).fetchall()
            return [StoredEvent(match_id, r[0], bytes(r[1]), bytes(r[2])) for r in rows]

        return await self._read(work)

    async def peer_secret(self) -> bytes:
        """The secret by which replicas sharing this store know each other's calls: drawn by
        the first to ask and kept in the database, so that only those who can read it (the
        replicas) can present it. Never logged."""
        candidate = secrets.token_bytes(32)

        def work(conn: Connection) -> bytes:
            conn.execute(
                "INSERT INTO peer_secret (id, secret) VALUES (1, ?) ON CONFLICT DO NOTHING",
                (candidate,),
            )
            return bytes(conn.execute("SELECT secret FROM peer_secret WHERE id = 1").fetchone()[0])

        return await self._submit(work)

    async def read_tail(self, match_id: str, count: int) -> list[StoredEvent]:
        """The last ``count`` events in order: how an ended match is listed without reading
        (and replaying) its whole log."""

        def work(conn: Connection) -> list[StoredEvent]:
            rows = conn.execute(
                "SELECT seq, payload, hash FROM events WHERE match_id = ?"
                " ORDER BY seq DESC LIMIT ?",
                (match_id, count),
            ).fetchall()
            return [StoredEvent(match_id, r[0], bytes(r[1]), bytes(r[2])) for r in reversed(rows)]

        return await self._read(work)

    async def last_seq(self, match_id: str) -> int:
        """The seq of the match's last event, 0 if it has none."""
        return (await self._tail(match_id))[0]

    async def last_hash(self, match_id: str) -> bytes:
        """The hash of the match's last event, or its genesis hash if it has none: in both
        cases the ``prev_hash`` its next event will chain from."""
        return (await self._tail(match_id))[1]

    async def request_result(self, match_id: str, request_id: str) -> tuple[int, int] | None:
        """``(first_seq, last_seq)`` written by a recorded request, or ``None``."""

        def work(conn: Connection) -> tuple[int, int] | None:
            row = conn.execute(
                "SELECT first_seq, last_seq FROM requests WHERE match_id = ? AND request_id = ?",
                (match_id, request_id),
            ).fetchone()
            return None if row is None else (row[0], row[1])

        return await self._read(work)

    async def _tail(self, match_id: str) -> tuple[int, bytes]:
        def work(conn: Connection) -> tuple[int, bytes]:
            row = conn.execute(
                "SELECT seq, hash FROM events WHERE match_id = ? ORDER BY seq DESC LIMIT 1",
                (match_id,),
            ).fetchone()
            return (0, genesis_hash(match_id)) if row is None else (row[0], bytes(row[1]))

        return await self._read(work)

    # ------------------------------------------------------------------ plumbing: reads

    async def _read(self, work: Callable[[Connection], T]) -> T:
        """Run a read on a reader thread with that thread's own connection."""
        readers = self._readers
        if readers is None or not self._accepting:
            raise StoreClosed("store is not open")
        try:
            return await asyncio.get_running_loop().run_in_executor(readers, self._read_sync, work)
        except RuntimeError as exc:  # the pool was shut down under us
            if readers is not self._readers:
                raise StoreClosed("store closed") from exc
            raise
        except Exception as exc:
            raise self._as_store_error(exc) from None

    def _read_sync(self, work: Callable[[Connection], T]) -> T:
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect_reader()
            with self._lock:
                self._read_conns.append(conn)
            self._local.conn = conn
        try:
            return work(conn)
        except Exception:
            if self._is_broken(conn):  # the next read on this thread reconnects
                self._local.conn = None
                with self._lock, contextlib.suppress(ValueError):
                    self._read_conns.remove(conn)
                with contextlib.suppress(Exception):
                    conn.close()
            raise

    def _as_store_error(self, exc: Exception) -> Exception:
        """Our own errors pass through; driver errors become :class:`StoreError` (with the
        original as ``__cause__``) so callers handle one family. Other exceptions are bugs and
        pass through unchanged."""
        if self._is_database_error(exc):
            wrapped = StoreError(f"{self.where}: {type(exc).__name__}: {exc}")
            wrapped.__cause__ = exc
            return wrapped
        return exc

    # ------------------------------------------------------------------ plumbing: writes

    async def _submit(self, work: Callable[[Connection], T]) -> T:
        """Queue ``work`` for the writer thread; return its result once committed.

        ``work`` runs inside its own SAVEPOINT within the batch transaction; whatever it
        raises is rolled back and raised here, and affects no other request.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if not self._accepting:
                raise StoreClosed("store is not open")
            self._queue.put(_Request(work, loop, future))
        return await future

    def _writer_main(
        self, jobs: queue.SimpleQueue[object], started: concurrent.futures.Future[None]
    ) -> None:
        """The writer thread: set up, then commit batches until told to stop."""
        conn: Connection | None
        try:
            conn = self._connect_writer()
        except BaseException as exc:
            started.set_exception(exc)
            return
        started.set_result(None)
        try:
            stop = False
            while not stop:
                batch: list[_Request[Any]] = []
                item = jobs.get()  # block for the first request …
                while True:  # … then take everything else already queued
                    if item is _STOP:
                        stop = True
                        break
                    batch.append(cast("_Request[Any]", item))
                    if len(batch) >= self._max_batch:
                        break
                    try:
                        item = jobs.get_nowait()
                    except queue.Empty:
                        break
                if not batch:
                    continue
                if conn is None:
                    conn = self._reconnect_writer()
                if conn is None:
                    self._fail_batch(batch, StoreError(f"{self.where} is unreachable"))
                    continue
                self._commit_batch(conn, batch)
                if self._is_broken(conn):
                    with contextlib.suppress(Exception):
                        conn.close()
                    conn = self._reconnect_writer()
        except BaseException:
            log.exception("store writer thread crashed")
            raise
        finally:
            with self._lock:
                self._accepting = False
            _fail_queued(jobs)
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    def _reconnect_writer(self) -> Connection | None:
        try:
            return self._connect_writer()
        except Exception as exc:
            log.error("store reconnect failed", store=self.where, error=str(exc))
            return None

    def _fail_batch(self, batch: list[_Request[Any]], exc: Exception) -> None:
        for request in batch:  # one exception object per caller: tracebacks are mutable
            failure = StoreError(f"batch transaction failed: {exc}")
            failure.__cause__ = exc
            _answer(request, None, failure)

    def _commit_batch(self, conn: Connection, batch: list[_Request[Any]]) -> None:
        """One transaction for the whole batch, one SAVEPOINT per request; answer everyone."""
        started = time.perf_counter()
        outcomes: list[tuple[Any, BaseException | None]] = []
        try:
            self._begin(conn)
            for request in batch:
                outcomes.append(self._run_in_savepoint(conn, request))
                if not self._in_transaction(conn):
                    # The database rolled the whole transaction back (I/O error, disk full, a
                    # lost connection): the earlier successes of this batch are gone too.
                    raise StoreError("the batch transaction was aborted by the database")
            conn.execute("COMMIT")
        except Exception as exc:
            if self._in_transaction(conn):
                try:
                    conn.execute("ROLLBACK")
                except Exception:
                    log.exception("store rollback failed")
            log.error("store batch failed", batch_size=len(batch), error=str(exc))
            self._fail_batch(batch, exc)
            return
        seconds = time.perf_counter() - started
        if self._on_commit is not None:
            try:
                self._on_commit(len(batch), seconds)
            except Exception:
                log.exception("store on_commit hook failed")
        for request, (result, request_error) in zip(batch, outcomes, strict=True):
            _answer(request, result, request_error)

    def _run_in_savepoint(
        self, conn: Connection, request: _Request[Any]
    ) -> tuple[Any, BaseException | None]:
        """Run one request so that its failure undoes exactly its own writes."""
        self._savepoint(conn)
        try:
            result = request.work(conn)
        except Exception as exc:
            if self._in_transaction(conn):
                self._rollback_to_savepoint(conn)
            return None, self._as_store_error(exc)
        self._release(conn)
        return result, None


def _match_row(conn: Connection, match_id: str) -> tuple[int, str]:
    """``(players, status)`` of a match, or :class:`UnknownMatch`."""
    row = conn.execute(
        "SELECT players, status FROM matches WHERE match_id = ?", (match_id,)
    ).fetchone()
    if row is None:
        raise UnknownMatch(match_id)
    return row[0], row[1]


def _check_fence(conn: Connection, match_id: str, fence: Fence | None, lock: str) -> None:
    if fence is None:
        return
    row = conn.execute(
        f"SELECT 1 FROM leases WHERE match_id = ? AND owner = ? AND epoch = ?{lock}",
        (match_id, fence.owner, fence.epoch),
    ).fetchone()
    if row is None:
        raise LeaseLost(match_id)


def _lease_row(conn: Connection, match_id: str, now_ms: str) -> Lease | None:
    row = conn.execute(
        f"SELECT owner, address, epoch, deadline_ms >= {now_ms} FROM leases WHERE match_id = ?",
        (match_id,),
    ).fetchone()
    return None if row is None else Lease(match_id, row[0], row[1], row[2], bool(row[3]))


def _fail_queued(jobs: queue.SimpleQueue[object]) -> None:
    """Answer anything still queued when the writer stops (only after a crash: close() stops
    accepting work before it queues the stop marker)."""
    while True:
        try:
            item = jobs.get_nowait()
        except queue.Empty:
            return
        if isinstance(item, _Request):
            _answer(item, None, StoreClosed("store writer stopped"))
