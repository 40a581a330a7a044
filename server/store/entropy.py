"""The entropy a tournament's entrants contribute to its seed (docs/rules.md §4.9).

Two tables, both written first-wins. ``tournament_offers`` holds each entrant's first Enter
before the tournament's first match (its 32 bytes, or NULL for an Enter without any), so an
entrant may enter through any replica, and the offer survives a restart. ``tournament_seals``
holds the contributions the tournament was dealt from, fixed once by its director just before
its first match: whatever is offered later is not mixed in, and every replica, every restart
and every auditor reads the same list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .schema import Connection
from .threads import StoreThreads

Contributions = list[bytes | None]
"""One per entrant, in entrant order: its 32 bytes, or ``None`` for none."""


class EntropyQueries(StoreThreads):
    """The contributed-entropy half of the tournament store."""

    async def offer_contribution(
        self, tournament_id: str, entrant: int, contribution: bytes | None
    ) -> None:
        """Note an entrant's Enter before the seal (its first offer stands)."""

        def work(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO tournament_offers (tournament_id, entrant, contribution)"
                " VALUES (?, ?, ?) ON CONFLICT (tournament_id, entrant) DO NOTHING",
                (tournament_id, entrant, contribution),
            )

        await self._submit(work)

    async def contribution_offers(self, tournament_id: str) -> dict[int, bytes | None]:
        """Every entrant that entered before the seal, with what it offered."""

        def work(conn: Connection) -> dict[int, bytes | None]:
            rows = conn.execute(
                "SELECT entrant, contribution FROM tournament_offers WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchall()
            return {int(r[0]): None if r[1] is None else bytes(r[1]) for r in rows}

        result: dict[int, bytes | None] = await self._read(work)
        return result

    async def seal_contributions(
        self, tournament_id: str, contributions: Sequence[bytes | None]
    ) -> Contributions:
        """Fix the tournament's contributions, once: returns what is sealed (another
        director's list, should one have sealed first)."""
        text = json.dumps([None if c is None else c.hex() for c in contributions])

        def work(conn: Connection) -> str:
            conn.execute(
                "INSERT INTO tournament_seals (tournament_id, contributions) VALUES (?, ?)"
                " ON CONFLICT (tournament_id) DO NOTHING",
                (tournament_id, text),
            )
            row = conn.execute(
                "SELECT contributions FROM tournament_seals WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
            return str(row[0])

        return _parsed(await self._submit(work))

    async def sealed_contributions(self, tournament_id: str) -> Contributions | None:
        """The sealed contributions, or ``None`` while the tournament waits for entrants."""

        def work(conn: Connection) -> str | None:
            row = conn.execute(
                "SELECT contributions FROM tournament_seals WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
            return None if row is None else str(row[0])

        text = await self._read(work)
        return None if text is None else _parsed(text)


def _parsed(text: str) -> Contributions:
    return [None if c is None else bytes.fromhex(c) for c in json.loads(text)]
