"""Ladders: one row each (settings, secret, status) and one row per duplicate group it
scheduled (its lineup). The matches themselves are ordinary matches whose ids the ladder
derives from their index, so a restart walks the groups and finds every match it made.

On replicas, a row of ``ladder_directors`` says which replica schedules a running ladder, and
until when (judged by the database's clock, the one clock replicas share): a lease, renewed by
its holder and taken over once it runs out, as a tournament's (its ``director`` columns)."""

from __future__ import annotations

import json

from .errors import StoreConflict
from .records import LadderRecord
from .rows import LADDERS
from .schema import Connection, check_page
from .threads import StoreThreads


class LadderQueries(StoreThreads):
    """The ladder part of the store."""

    async def create_ladder(self, record: LadderRecord) -> None:
        """Insert a new ladder; :class:`StoreConflict` if its id exists."""

        def work(conn: Connection) -> None:
            try:
                LADDERS.insert(conn, record)
            except Exception as exc:
                if self._is_unique_violation(exc):
                    raise StoreConflict(f"ladder {record.ladder_id!r} already exists") from exc
                raise

        await self._submit(work)

    async def get_ladder(self, ladder_id: str) -> LadderRecord | None:
        def work(conn: Connection) -> LadderRecord | None:
            return LADDERS.get(conn, ladder_id)

        return await self._read(work)

    async def list_ladders(
        self,
        *,
        page_size: int,
        page_token: str | None = None,
        running_only: bool = False,
        newest_first: bool = False,
    ) -> tuple[list[LadderRecord], str | None]:
        """One page in ``(created_at, ladder_id)`` order, or its reverse (``newest_first``),
        by keyset pagination, as matches."""
        check_page(page_size, page_token)

        def work(conn: Connection) -> tuple[list[LadderRecord], str | None]:
            return LADDERS.page(
                conn,
                filters=[("status = 'running'", ())] if running_only else [],
                page_size=page_size,
                page_token=page_token,
                descending=newest_first,
            )

        return await self._read(work)

    async def close_ladder(self, ladder_id: str, ended_at: str, reason: str) -> bool:
        """Mark the ladder closed with its reason, once: ``False`` if it was closed already."""

        def work(conn: Connection) -> bool:
            rows = conn.execute(
                "UPDATE ladders SET status = 'closed', ended_at = ?, end_reason = ?"
                " WHERE ladder_id = ? AND status = 'running' RETURNING ladder_id",
                (ended_at, reason, ladder_id),
            ).fetchall()
            return bool(rows)

        return bool(await self._submit(work))

    async def add_ladder_group(self, ladder_id: str, group: int, lineup: list[str]) -> None:
        """Record group ``group``'s lineup (before any of its matches is made); a group that
        exists already is :class:`StoreConflict`."""

        def work(conn: Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO ladder_groups (ladder_id, grp, lineup) VALUES (?, ?, ?)",
                    (ladder_id, group, json.dumps(lineup)),
                )
            except Exception as exc:
                if self._is_unique_violation(exc):
                    raise StoreConflict(f"ladder {ladder_id!r} has group {group}") from exc
                raise

        await self._submit(work)

    async def ladder_groups(
        self, ladder_id: str, first: int, limit: int
    ) -> list[tuple[int, list[str]]]:
        """Groups ``first`` on, at most ``limit``, in order: each number and its lineup."""

        def work(conn: Connection) -> list[tuple[int, list[str]]]:
            rows = conn.execute(
                "SELECT grp, lineup FROM ladder_groups WHERE ladder_id = ? AND grp >= ?"
                " ORDER BY grp LIMIT ?",
                (ladder_id, first, limit),
            ).fetchall()
            return [(int(row[0]), list(json.loads(row[1]))) for row in rows]

        result: list[tuple[int, list[str]]] = await self._read(work)
        return result

    async def claim_ladder(self, ladder_id: str, director: str, lease_ms: int) -> str:
        """Make ``director`` the replica that schedules a running ladder for ``lease_ms``, if
        nobody else holds it live; return who directs it now ("" if it is not running)."""

        def work(conn: Connection) -> str:
            now = self._now_ms
            conn.execute(
                "INSERT INTO ladder_directors (ladder_id, director, until_ms)"
                f" SELECT ladder_id, ?, {now} + ? FROM ladders"
                " WHERE ladder_id = ? AND status = 'running'"
                " ON CONFLICT (ladder_id) DO UPDATE SET director = excluded.director,"
                " until_ms = excluded.until_ms"
                " WHERE ladder_directors.director = excluded.director"
                f" OR ladder_directors.until_ms < {now}",
                (director, lease_ms, ladder_id),
            )
            row = conn.execute(
                "SELECT d.director FROM ladder_directors d JOIN ladders l USING (ladder_id)"
                " WHERE d.ladder_id = ? AND l.status = 'running'",
                (ladder_id,),
            ).fetchone()
            return "" if row is None else str(row[0])

        return str(await self._submit(work))

    async def ladder_director(self, ladder_id: str) -> tuple[str, bool] | None:
        """Who holds the lease on a ladder, and whether it is live; ``None``: nobody ever."""

        def work(conn: Connection) -> tuple[str, bool] | None:
            row = conn.execute(
                f"SELECT director, until_ms >= {self._now_ms} FROM ladder_directors"
                " WHERE ladder_id = ?",
                (ladder_id,),
            ).fetchone()
            return None if row is None else (str(row[0]), bool(row[1]))

        result: tuple[str, bool] | None = await self._read(work)
        return result

    async def renew_ladders(self, director: str, lease_ms: int) -> set[str]:
        """Push the leases of every running ladder ``director`` schedules ``lease_ms`` into
        the future; return their ids (one taken over meanwhile is not renewed)."""

        def work(conn: Connection) -> set[str]:
            rows = conn.execute(
                f"UPDATE ladder_directors SET until_ms = {self._now_ms} + ?"
                " WHERE director = ? AND ladder_id IN"
                " (SELECT ladder_id FROM ladders WHERE status = 'running') RETURNING ladder_id",
                (lease_ms, director),
            ).fetchall()
            return {str(r[0]) for r in rows}

        result: set[str] = await self._submit(work)
        return result

    async def orphaned_ladders(self) -> list[str]:
        """Running ladders whose director's lease ran out, or that never had one."""

        def work(conn: Connection) -> list[str]:
            rows = conn.execute(
                "SELECT l.ladder_id FROM ladders l LEFT JOIN ladder_directors d"
                " USING (ladder_id) WHERE l.status = 'running'"
                f" AND (d.ladder_id IS NULL OR d.until_ms < {self._now_ms})"
                " ORDER BY l.created_at, l.ladder_id"
            ).fetchall()
            return [str(r[0]) for r in rows]

        result: list[str] = await self._read(work)
        return result
