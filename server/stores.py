"""Choosing the event store from a URL: ``--store``.

SQLite is the default and needs no URL; PostgreSQL is chosen by ``postgresql://…`` (or
``postgres://…``). An unknown scheme is refused with the forms that are accepted, never guessed.
"""

from __future__ import annotations

from pathlib import Path

from .postgres_store import PostgresStore, redact
from .sqlite_store import SqliteStore
from .store import CommitHook, EventStore

__all__ = ["DEFAULT_SQLITE_FILE", "open_store", "redact"]

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
