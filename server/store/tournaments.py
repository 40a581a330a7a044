"""Tournaments: one row each (settings, seed, secret, status); their matches are ordinary
matches, found by the ids the tournament derives for them, so a tournament needs no other
table and a restart finds everything it had scheduled."""

from __future__ import annotations

from typing import Any, Final

from .errors import StoreConflict
from .records import TournamentRecord
from .schema import Connection, decode_page_token, encode_page_token
from .threads import StoreThreads

COLUMNS: Final = (
    "tournament_id, created_at, config, seed, secret, status, ended_at, end_reason, director"
)


def _from_row(row: tuple[Any, ...]) -> TournamentRecord:
    return TournamentRecord(
        tournament_id=row[0],
        created_at=row[1],
        config=bytes(row[2]),
        seed=bytes(row[3]),
        secret=bytes(row[4]),
        status=row[5],
        ended_at=row[6],
        end_reason=row[7],
        director=row[8],
    )


class TournamentQueries(StoreThreads):
    """The tournament half of the store."""

    async def create_tournament(self, record: TournamentRecord) -> None:
        """Insert a new tournament; :class:`StoreConflict` if its id exists."""

        def work(conn: Connection) -> None:
            try:
                conn.execute(
                    f"INSERT INTO tournaments ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        record.tournament_id,
                        record.created_at,
                        record.config,
                        record.seed,
                        record.secret,
                        record.status,
                        record.ended_at,
                        record.end_reason,
                        record.director,
                    ),
                )
            except Exception as exc:
                if self._is_unique_violation(exc):
                    raise StoreConflict(
                        f"tournament {record.tournament_id!r} already exists"
                    ) from exc
                raise

        await self._submit(work)

    async def end_tournament(
        self, tournament_id: str, ended_at: str, reason: str, status: str = "ended"
    ) -> bool:
        """Mark the tournament ended (``status`` ``ended`` or ``cancelled``) with its reason,
        once: ``False`` if it had already ended (the first reason stands)."""

        def work(conn: Connection) -> bool:
            rows = conn.execute(
                "UPDATE tournaments SET status = ?, ended_at = ?, end_reason = ?"
                " WHERE tournament_id = ? AND status = 'running' RETURNING tournament_id",
                (status, ended_at, reason, tournament_id),
            ).fetchall()
            return bool(rows)

        return bool(await self._submit(work))

    async def get_tournament(self, tournament_id: str) -> TournamentRecord | None:
        def work(conn: Connection) -> TournamentRecord | None:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM tournaments WHERE tournament_id = ?", (tournament_id,)
            ).fetchone()
            return None if row is None else _from_row(row)

        return await self._read(work)

    async def list_tournaments(
        self, *, page_size: int, page_token: str | None = None, running_only: bool = False
    ) -> tuple[list[TournamentRecord], str | None]:
        """One page in ``(created_at, tournament_id)`` order (keyset pagination, as matches)."""
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        after = None if page_token is None else decode_page_token(page_token)

        def work(conn: Connection) -> tuple[list[TournamentRecord], str | None]:
            where: list[str] = []
            args: list[object] = []
            if running_only:
                where.append("status = 'running'")
            if after is not None:
                where.append("(created_at, tournament_id) > (?, ?)")
                args.extend(after)
            sql = f"SELECT {COLUMNS} FROM tournaments"
            if where:
                sql += " WHERE " + " AND ".join(where)
            sql += " ORDER BY created_at, tournament_id LIMIT ?"
            rows = conn.execute(sql, (*args, page_size + 1)).fetchall()
            page = [_from_row(r) for r in rows[:page_size]]
            more = len(rows) > page_size
            token = encode_page_token(page[-1].created_at, page[-1].tournament_id) if more else None
            return page, token

        return await self._read(work)
