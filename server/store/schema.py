"""The one schema of both databases, the reads of a match's and a lease's row that writes check,
and the page tokens of listings."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any, Final

from .errors import InvalidPageToken, LeaseLost, UnknownMatch
from .records import Fence, Lease

Connection = Any
"""A DB-API style connection (``sqlite3`` or psycopg) whose ``execute`` takes ``?``
placeholders; :mod:`.postgres` wraps psycopg's to translate them."""

SCHEMA_VERSION: Final = 1
"""Bumped on any incompatible schema change; a store refuses a database written by a newer one."""

ENDED: Final = "ended"
"""The status :meth:`EventStore.end_match` sets; every other status counts as unfinished."""


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
CREATE INDEX IF NOT EXISTS matches_by_game ON matches (game, created_at, match_id);
CREATE INDEX IF NOT EXISTS matches_by_game_status ON matches (game, status, created_at, match_id);
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
CREATE TABLE IF NOT EXISTS tournaments (
    tournament_id TEXT    PRIMARY KEY,
    created_at    TEXT    NOT NULL,
    config        {bytes} NOT NULL,
    seed          {bytes} NOT NULL,
    secret        {bytes} NOT NULL,
    status        TEXT    NOT NULL,
    ended_at      TEXT    NULL,
    end_reason    TEXT    NOT NULL,
    director      TEXT    NOT NULL DEFAULT '',
    director_until_ms {int64} NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tournaments_by_created ON tournaments (created_at, tournament_id);
CREATE TABLE IF NOT EXISTS ladders (
    ladder_id  TEXT    PRIMARY KEY,
    created_at TEXT    NOT NULL,
    config     {bytes} NOT NULL,
    secret     {bytes} NOT NULL,
    status     TEXT    NOT NULL,
    ended_at   TEXT    NULL,
    end_reason TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS ladders_by_created ON ladders (created_at, ladder_id);
CREATE TABLE IF NOT EXISTS ladder_directors (
    ladder_id TEXT    PRIMARY KEY,
    director  TEXT    NOT NULL,
    until_ms  {int64} NOT NULL
);
CREATE TABLE IF NOT EXISTS ladder_groups (
    ladder_id TEXT    NOT NULL,
    grp       {int64} NOT NULL,
    lineup    TEXT    NOT NULL,
    PRIMARY KEY (ladder_id, grp)
);
CREATE TABLE IF NOT EXISTS tournament_offers (
    tournament_id TEXT    NOT NULL,
    entrant       INT     NOT NULL,
    contribution  {bytes} NULL,
    PRIMARY KEY (tournament_id, entrant)
);
CREATE TABLE IF NOT EXISTS tournament_seals (
    tournament_id TEXT PRIMARY KEY,
    contributions TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS peer_secret (
    id     INT     PRIMARY KEY,
    secret {bytes} NOT NULL
);
CREATE TABLE IF NOT EXISTS signing_keys (
    key_id     TEXT    PRIMARY KEY,
    public_key {bytes} NOT NULL,
    created_ms {int64} NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    match_id  TEXT    PRIMARY KEY,
    last_seq  {int64} NOT NULL,
    last_hash {bytes} NOT NULL,
    key_id    TEXT    NOT NULL,
    signature {bytes} NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament_summaries (
    tournament_id TEXT    PRIMARY KEY,
    summary       {bytes} NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament_results (
    tournament_id TEXT    PRIMARY KEY,
    summary       {bytes} NOT NULL
);
CREATE TABLE IF NOT EXISTS ladder_summaries (
    ladder_id TEXT    PRIMARY KEY,
    summary   {bytes} NOT NULL
);
CREATE TABLE IF NOT EXISTS outcomes (
    match_id TEXT    PRIMARY KEY,
    summary  {bytes} NOT NULL
);
"""


def schema_statements(*, bytes_type: str, int64: str, clustered: str = "") -> list[str]:
    """The one schema, in a database's words for bytes and 64-bit integers (and SQLite's
    ``WITHOUT ROWID`` for tables read by their primary key), one statement each."""
    text = _SCHEMA.format(bytes=bytes_type, int64=int64, clustered=clustered)
    return [statement for statement in text.split(";") if statement.strip()]


def encode_page_token(created_at: str, match_id: str) -> str:
    raw = json.dumps([created_at, match_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_page_token(token: str) -> tuple[str, str]:
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


def check_page(page_size: int, page_token: str | None) -> None:
    """Refuse a listing's bad size or malformed token before any query is queued."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    if page_token is not None:
        decode_page_token(page_token)


def keyset_page(
    conn: Connection,
    *,
    select: str,
    key: str,
    filters: Sequence[tuple[str, tuple[object, ...]]],
    page_size: int,
    page_token: str | None,
    descending: bool = False,
) -> tuple[list[tuple[Any, ...]], str | None]:
    """One page of rows in ``(created_at, <key>)`` order (``descending``: the reverse, newest
    first), and the token of the next (``None`` on the last page). Keyset pagination: the
    token names the last row returned, so pages stay exact while rows are being added (no
    skips, no repeats, unlike OFFSET), and each page reads its own rows along an index that
    begins with the filters' columns and ends ``created_at, <key>`` (in either direction),
    however many came before. ``select`` is ``SELECT … FROM table`` whose columns have
    ``created_at`` second and ``key`` first.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    where = [clause for clause, _ in filters]
    args = [arg for _, values in filters for arg in values]
    if page_token is not None:
        where.append(f"(created_at, {key}) {'<' if descending else '>'} (?, ?)")
        args.extend(decode_page_token(page_token))
    sql = select + (" WHERE " + " AND ".join(where) if where else "")
    order = " DESC" if descending else ""
    sql += f" ORDER BY created_at{order}, {key}{order} LIMIT ?"
    rows = conn.execute(sql, (*args, page_size + 1)).fetchall()
    page = rows[:page_size]
    more = len(rows) > page_size
    return page, encode_page_token(page[-1][1], page[-1][0]) if more else None


def match_row(conn: Connection, match_id: str) -> tuple[int, str]:
    """``(players, status)`` of a match, or :class:`UnknownMatch`."""
    row = conn.execute(
        "SELECT players, status FROM matches WHERE match_id = ?", (match_id,)
    ).fetchone()
    if row is None:
        raise UnknownMatch(match_id)
    return row[0], row[1]


def check_fence(conn: Connection, match_id: str, fence: Fence | None, lock: str) -> None:
    if fence is None:
        return
    row = conn.execute(
        f"SELECT 1 FROM leases WHERE match_id = ? AND owner = ? AND epoch = ?{lock}",
        (match_id, fence.owner, fence.epoch),
    ).fetchone()
    if row is None:
        raise LeaseLost(match_id)


def lease_row(conn: Connection, match_id: str, now_ms: str) -> Lease | None:
    row = conn.execute(
        f"SELECT owner, address, epoch, deadline_ms >= {now_ms} FROM leases WHERE match_id = ?",
        (match_id,),
    ).fetchone()
    return None if row is None else Lease(match_id, row[0], row[1], row[2], bool(row[3]))
