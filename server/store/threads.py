"""One writer thread, group commit, and reader threads: how the event loop never touches the
database.

A commit costs about as much as a hundred small inserts, so the writer thread drains
everything queued, writes it all in *one* transaction and pays one commit for the whole
batch. Each request runs inside its own SAVEPOINT, so a refused or failing request rolls back
alone and fails only its own caller. Reads run on a small pool of threads with their own
connections; each is a single statement, or a few in one read-only snapshot.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import TracebackType
from typing import Any, ClassVar, Final, Self, TypedDict, TypeVar, cast

import structlog

from .. import metrics
from .answers import Outcome, Request, answer, fail_queued
from .errors import StoreClosed, StoreError
from .records import StoredEvent
from .schema import SCHEMA_VERSION, Connection

log = structlog.get_logger(__name__)

T = TypeVar("T")

CommitHook = Callable[[int, float], None]
"""``on_commit(batch_size, seconds)``: called by the writer thread after every commit."""

ChangeHook = Callable[[str | None, int], None]
"""``on_change(match_id, last_seq)`` from :meth:`StoreThreads.listen`, on the listener thread;
``(None, 0)`` after a reconnect: changes may have been missed, re-read everything."""


class Tuning(TypedDict, total=False):
    """:class:`StoreThreads`' own keyword arguments, as each database's store passes them on
    (``**tuning: Unpack[Tuning]``) so that they and their defaults are written once, there."""

    on_commit: CommitHook | None
    max_batch: int
    read_threads: int


_STOP: Final = object()
"""Queued by :meth:`EventStore.close`: the writer finishes what precedes it, then exits."""


class StoreThreads(ABC):
    """How work reaches the database: one writer thread that group-commits, a pool of
    reader threads, and the few words each database must supply.

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
    _begin_snapshot: ClassVar[str] = "BEGIN"
    """Starts a read-only transaction in which every statement reads the same snapshot (in
    SQLite's WAL mode any read transaction does)."""
    _whole_batches: ClassVar[bool] = False
    """Whether a batch first runs without a savepoint per request (one transaction, two
    statements fewer per request), and again a savepoint each only if a request failed: where
    requests seldom fail, as in one process's SQLite, whose appends the process checked."""
    _share_lock: ClassVar[str] = ""
    """The locking clause that keeps a read lease row from changing until commit (none where
    the database serialises writers anyway, as SQLite does)."""
    _tail_cache: ClassVar[bool] = False
    """Whether the writer thread keeps each match's last seq and hash as it committed them, so
    that an append at that seq skips the SELECT that checks it (:meth:`_known_tail`): only where this
    process's writer is the database's only one (SQLite; a second writer is still refused by
    the primary keys, and an append the cache cannot vouch for is checked as before)."""

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
        self._tails: dict[str, tuple[int, bytes]] = {}
        """Each match's last seq and hash as committed (the writer thread's alone)."""
        self._new_tails: dict[str, tuple[int, bytes]] = {}
        """Those the batch in progress wrote: kept once it commits, dropped if it fails."""

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
        self, conn: Connection, events: list[StoredEvent], request: tuple[str, int | None] | None
    ) -> None:
        """Write ``events`` (and the ``(request_id, seat)`` that caused them). A store shared
        between processes also tells the others, at commit, where the match's log ends."""
        # One statement for the rows (each step hands the GIL back and forth with the event
        # loop): a row per event, in chunks well below SQLite's 32,766 parameters.
        for at in range(0, len(events), 256):
            chunk = events[at : at + 256]
            conn.execute(
                "INSERT INTO events (match_id, seq, payload, hash) VALUES "
                + ", ".join(["(?, ?, ?, ?)"] * len(chunk)),
                [value for e in chunk for value in (e.match_id, e.seq, e.payload, e.hash)],
            )
        if request is not None:
            conn.execute(
                "INSERT INTO requests (match_id, request_id, seat, first_seq, last_seq)"
                " VALUES (?, ?, ?, ?, ?)",
                (events[0].match_id, *request, events[0].seq, events[-1].seq),
            )

    def _known_tail(self, match_id: str) -> tuple[int, bytes] | None:
        """``(seq, hash)`` of the match's last entry as this writer wrote it, or ``None`` if it
        does not know (writer thread only)."""
        if not self._tail_cache:
            return None
        new = self._new_tails.get(match_id)
        return new if new is not None else self._tails.get(match_id)

    def _note_tail(self, match_id: str, seq: int, digest: bytes) -> None:
        if self._tail_cache:
            self._new_tails[match_id] = (seq, digest)

    def _forget_tail(self, match_id: str) -> None:
        """Check the match's next append against the database again (it ended, or an append
        the cache vouched for was refused)."""
        self._tails.pop(match_id, None)
        self._new_tails.pop(match_id, None)

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
        self._tails.clear()  # the database may have changed while the store was closed
        self._new_tails.clear()
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

    async def _read_snapshot(self, work: Callable[[Connection], T]) -> T:
        """A read of several statements that must agree with each other: run in one
        read-only transaction, so a commit between two of them is seen by neither or by both."""

        def in_snapshot(conn: Connection) -> T:
            conn.execute(self._begin_snapshot)
            try:
                result = work(conn)
            except BaseException:
                with contextlib.suppress(Exception):  # a broken connection is replaced anyway
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self._read(in_snapshot)

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
            self._queue.put(Request(work, loop, future))
        if metrics.STAGE_TIMES:
            metrics.lap("store: enqueue")
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
                batch: list[Request[Any]] = []
                item = jobs.get()  # block for the first request …
                while True:  # … then take everything else already queued
                    if item is _STOP:
                        stop = True
                        break
                    batch.append(cast("Request[Any]", item))
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
            fail_queued(jobs)
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    def _reconnect_writer(self) -> Connection | None:
        try:
            return self._connect_writer()
        except Exception as exc:
            log.error("store reconnect failed", store=self.where, error=str(exc))
            return None

    def _fail_batch(self, batch: list[Request[Any]], exc: Exception) -> None:
        outcomes: list[Outcome] = []
        for request in batch:  # one exception object per caller: tracebacks are mutable
            failure = StoreError(f"batch transaction failed: {exc}")
            failure.__cause__ = exc
            outcomes.append((request, None, failure))
        answer(outcomes)

    def _commit_batch(self, conn: Connection, batch: list[Request[Any]]) -> None:
        """One transaction for the whole batch, one SAVEPOINT per request (unless the batch
        went through whole, :meth:`_whole`); answer everyone."""
        started = time.perf_counter()
        timed = metrics.STAGE_TIMES
        if timed:
            metrics.WRITER.begin()
            cpu = metrics.WRITER.mark
        outcomes: list[tuple[Any, BaseException | None]] = []
        try:
            whole = self._whole(conn, batch) if self._whole_batches else None
            if whole is not None:
                outcomes = whole
            else:
                self._new_tails.clear()  # the batch's first run, if any, was rolled back
                self._begin(conn)
            for request in batch if whole is None else ():
                outcomes.append(self._run_in_savepoint(conn, request))
                self._check_open(conn)
            if timed:
                metrics.WRITER.lap("statements")
            conn.execute("COMMIT")
            if timed:
                metrics.WRITER.lap("commit")
        except Exception as exc:
            self._new_tails.clear()
            if self._in_transaction(conn):
                try:
                    conn.execute("ROLLBACK")
                except Exception:
                    log.exception("store rollback failed")
            log.error("store batch failed", batch_size=len(batch), error=str(exc))
            self._fail_batch(batch, exc)
            return
        if self._new_tails:
            self._tails.update(self._new_tails)
            self._new_tails.clear()
        seconds = time.perf_counter() - started
        if self._on_commit is not None:
            try:
                self._on_commit(len(batch), seconds)
            except Exception:
                log.exception("store on_commit hook failed")
        answer(
            [
                (request, result, error)
                for request, (result, error) in zip(batch, outcomes, strict=True)
            ]
        )
        if timed:
            metrics.WRITER.lap("answer")
            metrics.WRITER.add("writer cpu", time.thread_time_ns() - cpu)

    def _check_open(self, conn: Connection) -> None:
        if not self._in_transaction(conn):
            # The database rolled the whole transaction back (I/O error, disk full, a lost
            # connection): the earlier successes of this batch are gone too.
            raise StoreError("the batch transaction was aborted by the database")

    def _whole(
        self, conn: Connection, batch: list[Request[Any]]
    ) -> list[tuple[Any, BaseException | None]] | None:
        """Every request of ``batch`` in one transaction, none in a savepoint of its own: their
        outcomes, or ``None`` if one failed, the transaction then rolled back (the batch is
        run again a savepoint per request, so that the failure is its request's alone)."""
        self._new_tails.clear()
        self._begin(conn)
        outcomes: list[tuple[Any, BaseException | None]] = []
        for request in batch:
            try:
                outcomes.append((request.work(conn), None))
            except Exception:
                if self._in_transaction(conn):
                    conn.execute("ROLLBACK")
                return None
            self._check_open(conn)  # gone: the batch fails, as it would a savepoint each
        return outcomes

    def _run_in_savepoint(
        self, conn: Connection, request: Request[Any]
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
