"""A tournament's entry: the entrants' contributed entropy, and the seal that ends it.

RULES.md §4.9: entrants may contribute 32 bytes each before the first match, and every
duplicate group's seed derives from the tournament seed mixed with them. So the first match
waits, at most ``entry_ms`` from the tournament's creation, for every entrant to Enter; then
the director seals what was offered (one row, first writer wins) and plans every match from
the mixed seed. Offers are store rows, so an entrant may enter through any replica, and the
seal is what every replica, restart and auditor reads back.

A tournament that had started its first match before entries existed has no seal: it is
sealed with no contributions, which is its own seed, as it was played.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import datetime
from typing import Final

from cardarena.competition import Schedule, mixed_seed, schedule

from ..store import EventStore, TournamentRecord
from ..store.entropy import Contributions
from .spec import TournamentSpec

POLL_SECONDS: Final = 0.25
"""How often a waiting director looks for offers made through other replicas."""


class Entry:
    """What one tournament's entrants offered, until it is sealed."""

    def __init__(self, record: TournamentRecord, entrants: int, entry_ms: int) -> None:
        self.record = record
        self.entrants = entrants
        self.entry_ms = entry_ms
        self.sealed: Contributions | None = None
        """The contributions mixed into the seed, once fixed (``None`` while waiting)."""
        self.counted = 0
        """How many entrants' offers the directing replica found when it last looked."""
        self._offered = asyncio.Event()
        self._closed = False

    @property
    def tournament_id(self) -> str:
        return self.record.tournament_id

    def mixed(self) -> bytes:
        """The tournament seed mixed with the sealed contributions (sealed first)."""
        assert self.sealed is not None
        return mixed_seed(self.record.seed, self.sealed)

    async def offer(self, store: EventStore, entrant: int, contribution: bytes | None) -> None:
        """An entrant entered, with or without 32 bytes (checked by the API): noted if the
        entry is still open (its first offer stands; one after the seal is not mixed in)."""
        if self.sealed is not None:
            return
        await store.offer_contribution(self.tournament_id, entrant, contribution)
        self._offered.set()

    def close(self) -> None:
        """Stop waiting for entrants (the tournament is being cancelled)."""
        self._closed = True
        self._offered.set()

    async def read(self, store: EventStore) -> bool:
        """The seal, if there is one (another replica's, or a previous process's)."""
        if self.sealed is None:
            self.sealed = await store.sealed_contributions(self.tournament_id)
        return self.sealed is not None

    async def settle(self, store: EventStore, *, directing: bool, started: bool) -> None:
        """Have the seal: read it, or (``directing``) wait for every entrant or the end of
        the entry time and write it; ``started``: the first match exists already, from
        before entries (no contributions). A tournament that is only loaded again (it has
        ended) without a seal ended before its entry did, or before entries: its own seed."""
        if await self.read(store):
            return
        if not directing:
            self.sealed = [None] * self.entrants
            return
        if started:
            self.sealed = await store.seal_contributions(self.tournament_id, [None] * self.entrants)
            return
        deadline = created_seconds(self.record) + self.entry_ms / 1000
        while True:
            offers = await store.contribution_offers(self.tournament_id)
            self.counted = len(offers)
            remaining = deadline - time.time()
            if len(offers) >= self.entrants or remaining <= 0 or self._closed:
                break
            self._offered.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._offered.wait(), min(remaining, POLL_SECONDS))
        given = [offers.get(entrant) for entrant in range(self.entrants)]
        self.sealed = await store.seal_contributions(self.tournament_id, given)


def plan_matches(spec: TournamentSpec, seed: bytes) -> Schedule:
    """Every match to play, dealt from the (mixed) tournament ``seed`` (made on demand)."""
    return schedule(
        seed,
        deals=spec.deals,
        entrants=len(spec.entrants),
        players=spec.players,
        design=spec.design,
    )


def created_seconds(record: TournamentRecord) -> float:
    """The tournament's creation as Unix seconds (its row keeps an ISO 8601 time)."""
    return datetime.fromisoformat(record.created_at).timestamp()
