"""The durable event store: one append-only, hash-chained event log per match.

Two databases sit behind this one class: SQLite, embedded, for one process
(:mod:`.sqlite`), and PostgreSQL, shared by many replicas (:mod:`.postgres`).
Everything that matters is written once, here; a database contributes only how to connect,
its schema, and a few dialect words. Why it is shaped this way:

* **Persist before publish.** Every write method returns only after its transaction has been
  committed durably, so whatever the server acknowledges or streams survives a killed process.
* **One writer thread, group commit.** A commit costs about as much as a hundred small
  inserts, so the writer thread drains everything queued, writes it all in *one* transaction and
  pays one commit for the whole batch. Each request runs inside its own SAVEPOINT, so a refused
  or failing request rolls back alone and fails only its own caller.
* **The event loop never touches the database.** Writes go to the writer thread and reads to a
  small pool of reader threads with their own connections. Reads are single statements
  (a restart's bulk read: a few, in one read-only snapshot).
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

The rooms: :mod:`.errors` and :mod:`.records` (what callers see), :mod:`.schema` (tables and
rows), :mod:`.threads` (the writer and readers), :mod:`.leases`, :mod:`.tournaments` and
:mod:`.events` (the queries), :mod:`.sqlite` and :mod:`.postgres` (what each database adds), and here
:func:`open_store`, which picks one from a URL (``--store``): SQLite is the default and needs
no URL; PostgreSQL is chosen by ``postgresql://…`` (or ``postgres://…``). An unknown scheme is
refused with the forms that are accepted, never guessed.
"""

from __future__ import annotations

from pathlib import Path

from cardarena.v1.chain import GENESIS_DOMAIN, chain_hash, genesis_hash

from .errors import (
    DuplicateRequest,
    InvalidPageToken,
    LeaseLost,
    StoreClosed,
    StoreConflict,
    StoreError,
    UnknownMatch,
)
from .events import EventStore
from .postgres import PostgresStore, redact
from .records import (
    Answered,
    CheckpointRecord,
    Fence,
    LadderRecord,
    Lease,
    MatchLog,
    MatchRecord,
    Owner,
    PublicKeyRecord,
    SeatRecord,
    StoredEvent,
    TournamentRecord,
    now_iso,
    verify_chain,
)
from .schema import ENDED, SCHEMA_VERSION, Connection, schema_statements
from .sqlite import SqliteStore
from .threads import ChangeHook, CommitHook

__all__ = [
    "DEFAULT_SQLITE_FILE",
    "ENDED",
    "GENESIS_DOMAIN",
    "SCHEMA_VERSION",
    "Answered",
    "ChangeHook",
    "CheckpointRecord",
    "CommitHook",
    "Connection",
    "DuplicateRequest",
    "EventStore",
    "Fence",
    "InvalidPageToken",
    "LadderRecord",
    "Lease",
    "LeaseLost",
    "MatchLog",
    "MatchRecord",
    "Owner",
    "PostgresStore",
    "PublicKeyRecord",
    "SeatRecord",
    "SqliteStore",
    "StoreClosed",
    "StoreConflict",
    "StoreError",
    "StoredEvent",
    "TournamentRecord",
    "UnknownMatch",
    "chain_hash",
    "genesis_hash",
    "now_iso",
    "open_store",
    "redact",
    "schema_statements",
    "verify_chain",
]

DEFAULT_SQLITE_FILE = "arena.sqlite3"


def open_store(
    url: str | None, *, data_dir: Path, on_commit: CommitHook | None = None
) -> EventStore:
    """The store ``url`` names (not yet opened); ``None`` or ``""``: SQLite in ``data_dir``."""
    if not url:
        return SqliteStore(data_dir / DEFAULT_SQLITE_FILE, on_commit=on_commit)
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("postgresql", "postgres"):
        return PostgresStore(url, on_commit=on_commit)
    if scheme == "sqlite":
        path = url[len("sqlite:") :].removeprefix("//")
        if not path:
            raise ValueError(
                "a SQLite store URL names a file: sqlite:///abs/path or sqlite:rel/path"
            )
        return SqliteStore(Path(path), on_commit=on_commit)
    raise ValueError(
        f"unknown store {redact(url)!r}: use postgresql://user@host:port/db[?schema=NAME],"
        " sqlite:///path/to/file, or nothing for SQLite in the data directory"
    )
