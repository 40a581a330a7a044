"""Tournaments: one row each (settings, seed, secret, status); their matches are ordinary
matches, found by the ids the tournament derives for them, so a tournament needs no other
table and a restart finds everything it had scheduled."""

from __future__ import annotations

from .errors import StoreConflict
from .records import TournamentRecord
from .rows import TOURNAMENTS
from .schema import Connection, check_page
from .threads import StoreThreads


class TournamentQueries(StoreThreads):
    """The tournament half of the store."""

    async def create_tournament(self, record: TournamentRecord) -> None:
        """Insert a new tournament; :class:`StoreConflict` if its id exists."""

        def work(conn: Connection) -> None:
            try:
                TOURNAMENTS.insert(conn, record)
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

    async def claim_tournament(self, tournament_id: str, director: str, lease_ms: int) -> str:
        """Make ``director`` the replica that schedules a running tournament for ``lease_ms``,
        if nobody else holds it live (judged by the database's clock); return who directs it
        now ("" if it has ended)."""

        def work(conn: Connection) -> str:
            now = self._now_ms
            conn.execute(
                f"UPDATE tournaments SET director = ?, director_until_ms = {now} + ?"
                " WHERE tournament_id = ? AND status = 'running'"
                f" AND (director = ? OR director_until_ms < {now})",
                (director, lease_ms, tournament_id, director),
            )
            row = conn.execute(
                "SELECT director, status FROM tournaments WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
            return "" if row is None or row[1] != "running" else str(row[0])

        return str(await self._submit(work))

    async def renew_tournaments(self, director: str, lease_ms: int) -> set[str]:
        """Push the leases of every running tournament ``director`` schedules ``lease_ms``
        into the future; return their ids (one taken over meanwhile is not renewed)."""

        def work(conn: Connection) -> set[str]:
            rows = conn.execute(
                f"UPDATE tournaments SET director_until_ms = {self._now_ms} + ?"
                " WHERE director = ? AND status = 'running' RETURNING tournament_id",
                (lease_ms, director),
            ).fetchall()
            return {str(r[0]) for r in rows}

        result: set[str] = await self._submit(work)
        return result

    async def orphaned_tournaments(self) -> list[str]:
        """Running tournaments whose director's lease ran out."""

        def work(conn: Connection) -> list[str]:
            rows = conn.execute(
                "SELECT tournament_id FROM tournaments WHERE status = 'running'"
                f" AND director_until_ms < {self._now_ms} ORDER BY created_at, tournament_id"
            ).fetchall()
            return [str(r[0]) for r in rows]

        result: list[str] = await self._read(work)
        return result

    async def get_tournament(self, tournament_id: str) -> TournamentRecord | None:
        def work(conn: Connection) -> TournamentRecord | None:
            return TOURNAMENTS.get(conn, tournament_id)

        return await self._read(work)

    async def list_tournaments(
        self, *, page_size: int, page_token: str | None = None, running_only: bool = False
    ) -> tuple[list[TournamentRecord], str | None]:
        """One page in ``(created_at, tournament_id)`` order (keyset pagination, as matches)."""
        check_page(page_size, page_token)

        def work(conn: Connection) -> tuple[list[TournamentRecord], str | None]:
            return TOURNAMENTS.page(
                conn,
                filters=[("status = 'running'", ())] if running_only else [],
                page_size=page_size,
                page_token=page_token,
            )

        return await self._read(work)
