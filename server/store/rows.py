"""Tables whose row is one record: ``matches`` and ``tournaments``.

Their columns are the record's fields in the same order, so the column list, the insert, the
reading back (``bytes`` from whatever buffer the driver returns) and the lookups by id and by
page are written once here from the record's own fields, not once for each table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any, Generic, TypeVar

from .records import LadderRecord, MatchRecord, TournamentRecord
from .schema import Connection, keyset_page
from .summaries import marks

R = TypeVar("R", MatchRecord, TournamentRecord, LadderRecord)

Filters = Sequence[tuple[str, tuple[object, ...]]]
"""``WHERE`` clauses and their parameters, joined with ``AND``."""


class RecordTable(Generic[R]):
    """The table ``name`` of ``record`` rows, keyed by the record's first field."""

    def __init__(self, name: str, record: type[R]) -> None:
        self.name = name
        self.record: type[R] = record
        columns = fields(record)
        self._names = tuple(column.name for column in columns)
        self.key = self._names[0]
        self.columns = ", ".join(self._names)
        """The select list, in the record's field order."""
        self._blobs = tuple(column.type in (bytes, "bytes") for column in columns)
        self._insert = (
            f"INSERT INTO {name} ({self.columns}) VALUES ({', '.join('?' * len(columns))})"
        )

    def from_row(self, row: Sequence[Any]) -> R:
        """The record of a row selected with :attr:`columns`."""
        values: list[Any] = [
            bytes(value) if blob else value for value, blob in zip(row, self._blobs, strict=True)
        ]
        return self.record(*values)

    def insert(self, conn: Connection, record: R) -> None:
        conn.execute(self._insert, tuple(getattr(record, name) for name in self._names))

    def get(self, conn: Connection, key: str) -> R | None:
        """The row whose key is ``key``, or ``None``."""
        row = conn.execute(
            f"SELECT {self.columns} FROM {self.name} WHERE {self.key} = ?", (key,)
        ).fetchone()
        return None if row is None else self.from_row(row)

    def get_many(self, conn: Connection, keys: Sequence[str]) -> dict[str, R]:
        """The rows whose keys are among ``keys`` (one query), by key."""
        if not keys:
            return {}
        rows = conn.execute(
            f"SELECT {self.columns} FROM {self.name} WHERE {self.key} IN ({marks(len(keys))})",
            tuple(keys),
        ).fetchall()
        found = [self.from_row(row) for row in rows]
        return {getattr(record, self.key): record for record in found}

    def page(
        self,
        conn: Connection,
        *,
        filters: Filters,
        page_size: int,
        page_token: str | None,
        descending: bool = False,
    ) -> tuple[list[R], str | None]:
        """One page of records in ``(created_at, key)`` order, or its reverse (see
        :func:`.schema.keyset_page`)."""
        rows, token = keyset_page(
            conn,
            select=f"SELECT {self.columns} FROM {self.name}",
            key=self.key,
            filters=filters,
            page_size=page_size,
            page_token=page_token,
            descending=descending,
        )
        return [self.from_row(row) for row in rows], token


MATCHES = RecordTable("matches", MatchRecord)
TOURNAMENTS = RecordTable("tournaments", TournamentRecord)
LADDERS = RecordTable("ladders", LadderRecord)
