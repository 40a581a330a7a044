"""Leases: which replica owns a match, judged by the database's clock, fenced by an epoch.

Between replicas a *lease* names each match's owner; an append fenced by a lease fails once
another replica has taken the lease over (its epoch moved on).
"""

from __future__ import annotations

from .errors import StoreConflict
from .records import Lease, Owner
from .schema import ENDED, Connection, lease_row, match_row
from .threads import StoreThreads


class LeaseQueries(StoreThreads):
    """The lease half of the store: taking, renewing, releasing, finding orphans."""

    async def acquire_lease(self, match_id: str, owner: Owner) -> Lease:
        """Take the match's lease if it is free, expired or already ``owner``'s; return the
        lease as it stands afterwards (someone else's if it was live). Taking it from another
        owner moves the epoch on, which fences that owner's writes off. :class:`UnknownMatch`
        if there is no such match, :class:`StoreConflict` if it has ended."""

        def work(conn: Connection) -> Lease:
            _players, status = match_row(conn, match_id)
            if status == ENDED:
                raise StoreConflict(f"match {match_id!r} has ended")
            return self._take_lease(conn, match_id, owner)

        return await self._submit(work)

    def _take_lease(self, conn: Connection, match_id: str, owner: Owner) -> Lease:
        now = self._now_ms
        conn.execute(
            "INSERT INTO leases (match_id, owner, address, epoch, deadline_ms)"
            f" VALUES (?, ?, ?, 1, {now} + ?)"
            " ON CONFLICT (match_id) DO UPDATE SET"
            "  epoch = CASE WHEN leases.owner = excluded.owner THEN leases.epoch"
            "          ELSE leases.epoch + 1 END,"
            "  owner = excluded.owner, address = excluded.address,"
            "  deadline_ms = excluded.deadline_ms"
            f" WHERE leases.owner = excluded.owner OR leases.deadline_ms < {now}",
            (match_id, owner.replica, owner.address, owner.lease_ms),
        )
        lease = lease_row(conn, match_id, now)
        assert lease is not None  # the statement above made sure there is a row
        return lease

    async def get_lease(self, match_id: str) -> Lease | None:
        """The match's lease, or ``None`` if nobody holds one."""
        return await self._read(lambda conn: lease_row(conn, match_id, self._now_ms))

    async def renew_leases(self, owner: Owner) -> set[str]:
        """Push every lease ``owner`` holds ``lease_ms`` into the future; return the ids of the
        matches it still holds (a lease taken over meanwhile is not renewed, and not listed)."""

        def work(conn: Connection) -> set[str]:
            rows = conn.execute(
                f"UPDATE leases SET deadline_ms = {self._now_ms} + ? WHERE owner = ?"
                " RETURNING match_id",
                (owner.lease_ms, owner.replica),
            ).fetchall()
            return {r[0] for r in rows}

        return await self._submit(work)

    async def release_leases(self, owner: Owner) -> int:
        """Give up every lease ``owner`` holds (a draining replica); return how many."""

        def work(conn: Connection) -> int:
            rows = conn.execute(
                "DELETE FROM leases WHERE owner = ? RETURNING match_id", (owner.replica,)
            ).fetchall()
            return len(rows)

        return await self._submit(work)

    async def release_lease(self, match_id: str, owner: Owner) -> None:
        """Give up one lease, if ``owner`` holds it."""

        def work(conn: Connection) -> None:
            conn.execute(
                "DELETE FROM leases WHERE match_id = ? AND owner = ?", (match_id, owner.replica)
            )

        await self._submit(work)

    async def orphaned_matches(self, limit: int = 100) -> list[str]:
        """Unfinished matches that nobody holds a live lease on, oldest first: what a replica
        should take over (their owner died or drained)."""

        def work(conn: Connection) -> list[str]:
            rows = conn.execute(
                "SELECT m.match_id FROM matches m LEFT JOIN leases l ON l.match_id = m.match_id"
                f" WHERE m.status != ? AND (l.match_id IS NULL OR l.deadline_ms < {self._now_ms})"
                " ORDER BY m.created_at, m.match_id LIMIT ?",
                (ENDED, limit),
            ).fetchall()
            return [r[0] for r in rows]

        return await self._read(work)
