"""Each ended match's outcome as one row, written once its log is final.

Why a row: listing ended matches, or resuming a tournament of thousands of them, needed every
log read through to its end to learn a few numbers (totals, winners, faults, the last hash),
so a page of a hundred cost a hundred logs, and anyone may ask for pages. The outcome is a
fold of a final log, so it never changes once the seed is revealed: the first reader to fold
it keeps it here (the first writer wins, as for checkpoints), and every later one reads a
row. The summary's form is the hosting layer's (:mod:`cardarena.server.hosting.outcome`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .schema import Connection
from .threads import StoreThreads


class OutcomeQueries(StoreThreads):
    """The outcomes half of the store."""

    async def save_outcomes(self, summaries: Mapping[str, bytes]) -> None:
        """Keep each match's summary unless it has one (they are folds of final logs, so a
        second writer would write the same)."""
        if not summaries:
            return

        def work(conn: Connection) -> None:
            for match_id, summary in summaries.items():
                conn.execute(
                    "INSERT INTO outcomes (match_id, summary) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (match_id, summary),
                )

        await self._submit(work)

    async def get_outcomes(self, match_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored summaries of those of ``match_ids`` that have one."""
        if not match_ids:
            return {}

        def work(conn: Connection) -> dict[str, bytes]:
            marks = ", ".join("?" for _ in match_ids)
            rows = conn.execute(
                f"SELECT match_id, summary FROM outcomes WHERE match_id IN ({marks})",
                tuple(match_ids),
            ).fetchall()
            return {r[0]: bytes(r[1]) for r in rows}

        return await self._read(work)
