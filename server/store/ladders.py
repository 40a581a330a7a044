"""Ladders: one row each (settings, secret, status) and one row per duplicate group it
scheduled (its lineup). The matches themselves are ordinary matches whose ids the ladder
derives from their index, so a restart walks the groups and finds every match it made."""

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
