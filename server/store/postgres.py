"""The shared event store: PostgreSQL, for several server replicas (or any PostgreSQL-compatible
database). Same tables, bytes and hash chain as the SQLite store; what it adds is what sharing
needs: the primary key ``(match_id, seq)`` turns a second writer's append into a conflict,
leases carry the database's clock, and every append announces itself with ``pg_notify``, which
PostgreSQL delivers at commit, so replicas serving a match's streams wake without polling.

``postgresql://user:password@host:port/db?schema=NAME`` picks the database and, with the one
parameter that is ours, the schema that holds cardarena's tables (``public`` by default; it is
created if missing), so several arenas or test runs can share one database.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import threading
import time
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Final, Unpack

import psycopg
import structlog
from psycopg import sql
from psycopg.pq import TransactionStatus

from .events import EventStore
from .records import StoredEvent
from .schema import Connection, schema_statements
from .threads import ChangeHook, Tuning

__all__ = ["PostgresStore", "redact"]

log = structlog.get_logger(__name__)

_TABLES: Final = schema_statements(bytes_type="BYTEA", int64="BIGINT")

_SCHEMA_NAME: Final = re.compile(r"^[a-z_][a-z0-9_]{0,47}$")
_CONNECT_TIMEOUT_S: Final = 5
_RELISTEN_PAUSE_S: Final = 0.5


_SECRET_PARAMETERS: Final = frozenset({"password", "sslpassword"})
_USERINFO_PASSWORD: Final = re.compile(r"(//[^/:@]*):[^@/]*@")


def redact(url: str) -> str:
    """``url`` with every password replaced (in the user part and in the query), fit for
    logs and error messages; also for a URL too malformed to parse."""
    try:
        parts = urllib.parse.urlsplit(url)
        query = [
            (key, "***" if key.lower() in _SECRET_PARAMETERS else value)
            for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        ]
        url = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query, safe="*")))
    except ValueError:
        return "<a store URL that does not parse>"
    return _USERINFO_PASSWORD.sub(r"\1:***@", url)


def split_schema(url: str) -> tuple[str, str]:
    """``(url without our schema parameter, schema)``; ``ValueError`` names a bad one."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"a PostgreSQL store URL starts with postgresql://, got {redact(url)!r}")
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in query if key == "schema"]
    rest = [(key, value) for key, value in query if key != "schema"]
    schema = schemas[-1] if schemas else "public"
    if not _SCHEMA_NAME.match(schema):
        raise ValueError(
            f"schema must be lower-case letters, digits and _ (at most 48), got {schema!r}"
        )
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(rest))), schema


@functools.lru_cache(maxsize=256)
def _translate(statement: str) -> str:
    """The store's SQL uses ``?`` placeholders (and no ``%``); psycopg wants ``%s``."""
    return statement.replace("?", "%s")


class _Pg:
    """A psycopg connection that speaks the store's placeholder style, and can hold statements
    back to send them with the next one.

    Why: the writer thread talks to a server, and each statement it waits for is a round trip.
    ``SAVEPOINT`` and ``RELEASE`` answer nothing the writer needs, so they are deferred and go,
    pipelined, in front of the request's first real statement (or the ``COMMIT``): an append
    costs two round trips instead of four.
    """

    __slots__ = ("pending", "raw")

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw
        self.pending: list[str] = []

    def defer(self, statement: str) -> None:
        self.pending.append(statement)

    def execute(self, statement: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        if not self.pending:
            return self.raw.execute(_translate(statement), params)
        deferred, self.pending = self.pending, []
        with self.raw.pipeline():
            for held in deferred:
                self.raw.execute(held)
            # Returned from inside the block: its exit syncs and raises any error first.
            return self.raw.execute(_translate(statement), params)

    def executemany(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        self.flush()
        with self.raw.cursor() as cursor:
            cursor.executemany(_translate(statement), rows)

    def flush(self) -> None:
        deferred, self.pending = self.pending, []
        if deferred:
            with self.raw.pipeline():
                for held in deferred:
                    self.raw.execute(held)

    def close(self) -> None:
        self.pending.clear()
        self.raw.close()


class PostgresStore(EventStore):
    """The event store in a PostgreSQL schema, shareable by many processes."""

    shared: ClassVar[bool] = True
    _no_limit: ClassVar[object] = None
    _now_ms: ClassVar[str] = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
    _share_lock: ClassVar[str] = " FOR SHARE"
    _begin_snapshot: ClassVar[str] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    def __init__(self, url: str, **tuning: Unpack[Tuning]) -> None:
        super().__init__(**tuning)
        self._url, self.schema = split_schema(url)
        self.channel = f"cardarena_{self.schema}"
        self._listener: threading.Thread | None = None
        self._listening = threading.Event()

    @property
    def where(self) -> str:
        return f"postgresql {redact(self._url)} schema {self.schema}"

    # ------------------------------------------------------------------ connections

    def _connect(self) -> _Pg:
        raw = psycopg.connect(
            self._url,
            autocommit=True,
            connect_timeout=_CONNECT_TIMEOUT_S,
            application_name="cardarena",
        )
        try:
            raw.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        except BaseException:
            raw.close()
            raise
        return _Pg(raw)

    def _connect_writer(self) -> Connection:
        conn = self._connect()
        try:
            conn.execute("BEGIN")
            # Replicas starting together must not race each other's CREATE … IF NOT EXISTS.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"cardarena:{self.schema}",))
            conn.raw.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            for statement in _TABLES:
                conn.execute(statement)
            self._check_schema_version(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_reader(self) -> Connection:
        return self._connect()

    def _begin(self, conn: Connection) -> None:
        conn.execute("BEGIN")

    def _in_transaction(self, conn: Connection) -> bool:
        status = conn.raw.info.transaction_status
        return status in (TransactionStatus.INTRANS, TransactionStatus.INERROR)

    def _is_broken(self, conn: Connection) -> bool:
        return bool(conn.raw.closed or conn.raw.broken)

    def _is_unique_violation(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.UniqueViolation)

    def _is_database_error(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.Error)

    # ------------------------------------------------------------------ notifications

    def _insert_events(
        self, conn: Connection, events: list[StoredEvent], request: tuple[str, int | None] | None
    ) -> None:
        """Events, request and notification in one statement: one round trip."""
        match_id, first, last = events[0].match_id, events[0].seq, events[-1].seq
        conn.execute(
            "WITH done AS ("
            "  INSERT INTO requests (match_id, request_id, seat, first_seq, last_seq)"
            "  SELECT ?, ?, ?, ?, ? WHERE ?"
            "), written AS ("
            "  INSERT INTO events (match_id, seq, payload, hash)"
            "  SELECT ?, s, p, h FROM unnest(?::bigint[], ?::bytea[], ?::bytea[]) AS x(s, p, h)"
            "  RETURNING 1"
            ") SELECT pg_notify(?, ?) FROM (SELECT count(*) FROM written) AS n",
            (
                match_id,
                None if request is None else request[0],
                None if request is None else request[1],
                first,
                last,
                request is not None,
                match_id,
                [e.seq for e in events],
                [e.payload for e in events],
                [e.hash for e in events],
                self.channel,
                f"{match_id} {last}",
            ),
        )

    def _savepoint(self, conn: Connection) -> None:
        conn.defer("SAVEPOINT request")

    def _release(self, conn: Connection) -> None:
        conn.defer("RELEASE SAVEPOINT request")

    def _rollback_to_savepoint(self, conn: Connection) -> None:
        if conn.pending and conn.pending[-1] == "SAVEPOINT request":
            conn.pending.pop()  # the request failed before sending anything: nothing to undo
            conn.flush()
            return
        conn.flush()
        conn.execute("ROLLBACK TO SAVEPOINT request")
        conn.execute("RELEASE SAVEPOINT request")

    def listen(self, on_change: ChangeHook) -> None:
        """Start a thread that calls ``on_change(match_id, last_seq)`` for every append any
        process commits, and ``on_change(None, 0)`` on every (re)connection, since
        notifications sent while nobody listened are gone."""
        if self._listener is not None:
            raise RuntimeError("already listening")
        self._listening.set()
        self._listener = threading.Thread(
            target=self._listen_main,
            args=(on_change,),
            name="cardarena-store-listener",
            daemon=True,
        )
        self._listener.start()

    def _listen_main(self, on_change: ChangeHook) -> None:
        while self._listening.is_set():
            try:
                conn = self._connect()
            except psycopg.Error as exc:
                log.warning("store listener cannot connect", error=str(exc))
                time.sleep(_RELISTEN_PAUSE_S)
                continue
            try:
                conn.raw.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                on_change(None, 0)
                while self._listening.is_set():
                    for note in conn.raw.notifies(timeout=0.25):
                        match_id, _, seq = note.payload.rpartition(" ")
                        on_change(match_id, int(seq))
            except psycopg.Error as exc:
                log.warning("store listener lost its connection", error=str(exc))
                time.sleep(_RELISTEN_PAUSE_S)
            except Exception:
                log.exception("store listener callback failed")
            finally:
                with contextlib.suppress(Exception):
                    conn.close()

    async def close(self) -> None:
        self._listening.clear()
        listener, self._listener = self._listener, None
        if listener is not None:
            await asyncio.to_thread(listener.join)
        await super().close()
