"""What never changes once final, kept as one row each: an ended match's outcome, an ended
tournament's listing and its signed results, a closed ladder's last signed snapshot (without
their match lines, which a reader pages through from the matches' own rows).

Why rows: listing ended matches, or resuming a tournament of thousands of them, needed every
log read through to its end to learn a few numbers (totals, winners, faults, the last hash),
and listing ended tournaments read each one back whole; anyone may ask for pages. Both are
folds of what is final (a match's log once its seed is revealed, a tournament once every match
it began is in), so they never change: the first reader to fold one keeps it here (the first
writer wins, as for checkpoints), and every later one reads a row. Their form is their
readers' (:mod:`cardarena.server.hosting.outcome`, the tournaments' registry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

from .schema import Connection
from .threads import StoreThreads

Kind = Literal["match", "tournament", "results", "ladder"]

TABLES: Final[dict[Kind, tuple[str, str]]] = {
    "match": ("outcomes", "match_id"),
    "tournament": ("tournament_summaries", "tournament_id"),
    "results": ("tournament_results", "tournament_id"),
    "ladder": ("ladder_summaries", "ladder_id"),
}
"""Each kind's table and key column (the other column is ``summary``)."""


def marks(count: int) -> str:
    """The placeholders of an ``IN (...)`` list of ``count`` values."""
    return ", ".join("?" * count)


class SummaryQueries(StoreThreads):
    """The kept summaries half of the store."""

    async def keep_summaries(self, kind: Kind, summaries: Mapping[str, bytes]) -> None:
        """Keep each summary unless its match or tournament has one (a fold of what is
        final: a second writer would write the same)."""
        if not summaries:
            return
        table, key = TABLES[kind]

        def work(conn: Connection) -> None:
            for name, summary in summaries.items():
                conn.execute(
                    f"INSERT INTO {table} ({key}, summary) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (name, summary),
                )

        await self._submit(work)

    async def kept_summaries(self, kind: Kind, names: Sequence[str]) -> dict[str, bytes]:
        """The kept summaries of those of ``names`` that have one, in one read."""
        if not names:
            return {}
        table, key = TABLES[kind]

        def work(conn: Connection) -> dict[str, bytes]:
            rows = conn.execute(
                f"SELECT {key}, summary FROM {table} WHERE {key} IN ({marks(len(names))})",
                tuple(names),
            ).fetchall()
            return {r[0]: bytes(r[1]) for r in rows}

        return await self._read(work)
