"""The embedded event store: SQLite in WAL mode, for one server process.

``synchronous=FULL`` makes every commit survive a power cut as well as a killed process; group
commit (in :class:`~.events.EventStore`) keeps that cheap. Readers have their own connections,
which WAL lets read while the writer writes; ``BEGIN IMMEDIATE`` takes the write lock up front
so a batch never fails half-way for want of it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import ClassVar, Final, Unpack

from .errors import StoreError
from .events import EventStore
from .schema import Connection, schema_statements
from .threads import Tuning

__all__ = ["SqliteStore"]

_SCHEMA: Final = schema_statements(bytes_type="BLOB", int64="INTEGER", clustered="WITHOUT ROWID")

_BUSY_TIMEOUT_MS: Final = 5000


class SqliteStore(EventStore):
    """The event store in one SQLite file (created if missing)."""

    _now_ms: ClassVar[str] = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
    _whole_batches: ClassVar[bool] = True
    _tail_cache: ClassVar[bool] = True

    def __init__(self, path: Path, **tuning: Unpack[Tuning]) -> None:
        super().__init__(**tuning)
        self.path = Path(path)

    @property
    def where(self) -> str:
        return f"sqlite {self.path}"

    def _connect_writer(self) -> Connection:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"cannot use WAL journal mode on {self.path} (got {mode!r})")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                # executescript() would COMMIT the open transaction first.
                for statement in _SCHEMA:
                    conn.execute(statement)
                self._check_schema_version(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_reader(self) -> Connection:
        # check_same_thread=False only so that close() can close it from another thread.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        return conn

    def _begin(self, conn: Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def _in_transaction(self, conn: Connection) -> bool:
        return bool(conn.in_transaction)

    def _is_unique_violation(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError)

    def _is_database_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error)
