"""The PostgreSQL side of ``--replicas``: a fresh schema per replicated run, and its reads.

Why: each set of replicas must start on an empty store and leave nothing behind, also when the
run is interrupted (Ctrl-C, SIGTERM): the replicas create the schema named in their store URL,
and this module drops it (``DROP SCHEMA ... CASCADE``) when the run ends, and again at exit for
any it could not drop. The table reads per action come from ``pg_stat_user_tables`` of that
schema alone, so other users of the database do not count.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
import urllib.parse
from collections.abc import Iterator

import psycopg
from psycopg import sql

DEFAULT_STORE_URL = "postgresql://postgres@127.0.0.1:5432/test"

LIVE_SCHEMAS: set[tuple[str, str]] = set()
"""(url, schema) created for a run and not yet dropped: dropped again at exit if need be."""


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def check_postgres(url: str) -> str | None:
    """``None`` if PostgreSQL at ``url`` answers, else why not (one line)."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except (psycopg.Error, OSError) as error:
        return one_line(error) or type(error).__name__
    return None


def with_schema(url: str, schema: str | None) -> str:
    """``url`` naming ``schema`` in its query (``None``: naming none, the database's default)."""
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "schema"]
    if schema is not None:
        query.append(("schema", schema))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def schema_in(url: str) -> str:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)).get("schema", "public")


def drop_schema(url: str, schema: str) -> None:
    """``DROP SCHEMA … CASCADE``, bounded in time; a failure is reported, not raised."""
    try:
        with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '20s'")
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        LIVE_SCHEMAS.discard((url, schema))
    except (psycopg.Error, OSError) as error:
        print(
            f"bench_server: could not drop schema {schema} ({one_line(error)}); "
            f'drop it by hand: DROP SCHEMA "{schema}" CASCADE',
            file=sys.stderr,
        )


def drop_live_schemas() -> None:
    """Drop every schema a run created and could not drop yet."""
    for url, schema in sorted(LIVE_SCHEMAS):
        drop_schema(url, schema)


@contextlib.contextmanager
def fresh_schema(url: str) -> Iterator[str]:
    """A new schema name for the replicas (they create it), dropped when the run ends, however
    it ends; yields the store URL naming it."""
    schema = f"bench_{secrets.token_hex(5)}"
    LIVE_SCHEMAS.add((url, schema))
    try:
        yield with_schema(url, schema)
    finally:
        drop_schema(url, schema)


def postgres_scans(store: str | None) -> int | None:
    """Index and sequential scans so far of the tables in the schema of ``store`` (PostgreSQL's
    statistics, which backends report within a second or so), or ``None``."""
    if store is None:
        return None
    try:
        with psycopg.connect(with_schema(store, None), connect_timeout=5, autocommit=True) as conn:
            row = conn.execute(
                "SELECT sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0))"
                " FROM pg_stat_user_tables WHERE schemaname = %s",
                (schema_in(store),),
            ).fetchone()
    except (psycopg.Error, OSError):
        return None
    return None if row is None or row[0] is None else int(row[0])
