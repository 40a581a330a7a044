"""How an arena shares its matches: alone, or as one replica of several.

The arena asks its policy the few questions whose answer depends on it, and nothing else in
the hosting layer asks whether it is alone:

* who writes a match (:meth:`Replication.writer_of`): alone, this process, always; a replica
  writes the matches whose lease it holds and names the owner of the others, to forward to;
* what a match loaded from the store becomes (:meth:`Replication.loaded`): alone, its writer
  (writing its opening if its creator died before that); a replica, a follower of the log;
* what starting and stopping mean (:meth:`Replication.start`, :meth:`Replication.stop`):
  alone, resume every unfinished match; a replica listens to the store's notifications, keeps
  its leases, takes over the matches whose owner stopped renewing, and hands its leases back
  when it stops.

A hosted match keeps its own lease state (``owned``, ``fence``); alone it owns every match for
ever, so the single-process path never takes a replica's branch.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import structlog

from .. import metrics
from ..store import Owner, StoreConflict, StoreError, UnknownMatch
from .completion import Background, cancel_and_wait
from .match import HostedMatch

if TYPE_CHECKING:
    from .arena import Arena

log = structlog.get_logger(__name__)

CLAIMS_PER_ROUND = 50
"""How many orphaned matches one lease-keeper round takes at most, so replicas share them."""
SOON = (0.02, 0.1)
"""Seconds before the next round, at random in this range, while orphans are left."""


def final(hosted: HostedMatch) -> bool:
    """Whether nothing more will be written to the match: it has ended and its seed is
    revealed. An ended match whose shared seed is still to be revealed has a writer yet."""
    return hosted.ended and hosted.revealed


class Replication:
    """Alone: this process owns and writes every match (the SQLite server)."""

    owner: Owner | None = None
    """This process as a lease holder; ``None`` alone."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def writer_of(self, match_id: str) -> HostedMatch | str:
        """Where an action on ``match_id`` must go: the hosted match, or the address of the
        replica that writes it."""
        return await self.arena.get(match_id)

    async def loaded(self, hosted: HostedMatch, *, empty: bool) -> None:
        """A match was just loaded from the store (``empty``: no event logged yet)."""
        if empty:  # its creator died between creating it and writing its opening
            await self.arena.write_opening(hosted)

    async def start(self) -> int:
        """Host what the store holds; how many matches that took up."""
        return await self.arena.load_unfinished()

    async def stop(self) -> None:
        """Let go of what this process holds (nothing to hand over alone)."""


class Replicas(Replication):
    """One replica of several sharing a PostgreSQL store, as ``owner``."""

    def __init__(self, arena: Arena, owner: Owner) -> None:
        super().__init__(arena)
        self.owner: Owner = owner
        self._keeper: asyncio.Task[None] | None = None
        self._background = Background(log, "follow_failed")

    async def writer_of(self, match_id: str) -> HostedMatch | str:
        """The hosted match if this replica owns it (taking the lease over if nobody holds it
        live), else the owner's address."""
        known = self.arena.matches.get(match_id)
        if known is not None and (known.owned or final(known)):
            return known
        lease = await self.arena.store.get_lease(match_id)  # the common case: one read
        if lease is not None and lease.live and lease.owner != self.owner.replica:
            return lease.address
        hosted = await self.arena.get(match_id)
        if hosted.owned or final(hosted):
            return hosted
        try:
            lease = await self.arena.store.acquire_lease(match_id, self.owner)
        except StoreConflict:  # it ended meanwhile
            await hosted.catch_up()
            return hosted
        if lease.owner != self.owner.replica:
            return lease.address
        await hosted.take_over(lease.fence)
        return hosted

    async def loaded(self, hosted: HostedMatch, *, empty: bool) -> None:
        """A replica follows what it loads until it holds the lease. A notification that came
        while the log was being read found no follower to wake: read once more, now that
        later ones will find it."""
        hosted.owned = False
        await hosted.catch_up()

    async def start(self) -> int:
        """Listen to the store, take over whatever no live replica owns, keep leases."""
        loop = asyncio.get_running_loop()

        def notified(match_id: str | None, seq: int) -> None:  # on the listener thread
            loop.call_soon_threadsafe(self.changed_elsewhere, match_id, seq)

        self.arena.store.listen(notified)
        claimed = await self.keep_leases_once()
        self._keeper = asyncio.create_task(self._keep_leases(claimed))
        log.info("replica_started", replica=self.owner.replica, claimed=claimed)
        return claimed

    async def stop(self) -> None:
        """Hand the leases back so others take over at once instead of after they run out."""
        await cancel_and_wait(self._keeper)
        self._keeper = None
        with contextlib.suppress(StoreError):
            await self.arena.store.release_leases(self.owner)
        for hosted in self.arena.matches.values():
            hosted.demote(released=True)
        for task in list(self._background.tasks):
            task.cancel()

    def changed_elsewhere(self, match_id: str | None, seq: int) -> None:
        """A store notification (on the loop): wake the followers it concerns."""
        matches = self.arena.matches
        if match_id is None:  # the listener (re)connected: anything may have been missed
            followed = [h for h in matches.values() if not h.owned and not h.ended]
        else:
            hosted = matches.get(match_id)
            followed = [] if hosted is None or hosted.owned or seq <= hosted.last_seq else [hosted]
        for hosted in followed:
            self._background.spawn(self._follow(hosted))

    async def _follow(self, hosted: HostedMatch) -> None:
        """Catch a follower up, retrying while the store is away: no later notification may
        come (the owner may be waiting on a seat that streams from here)."""
        pause = 0.1
        while not hosted.owned:
            try:
                await hosted.catch_up()
                return
            except StoreError as error:
                log.warning("follow_retry", match_id=hosted.match_id, error=str(error))
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)

    async def _keep_leases(self, claimed: int) -> None:
        """A round every third of a lease; at once (a random moment soon, so that replicas
        claiming together share) while the last round took as many orphans as a round may:
        more are likely left, and every one of their players waits."""
        period = self.owner.lease_ms / 3000
        while True:
            more = claimed >= CLAIMS_PER_ROUND
            await asyncio.sleep(random.uniform(*SOON) if more else period * random.uniform(0.8, 1))
            try:
                claimed = await self.keep_leases_once()
            except StoreError as error:  # the database is away: try again next round
                claimed = 0
                log.warning("lease_round_failed", error=str(error))

    async def keep_leases_once(self) -> int:
        """Renew this replica's leases, let go of the ones lost, take over orphans."""
        store = self.arena.store
        # Only what was owned before renewing can have been lost: a match created meanwhile
        # is owned but was not there to be renewed.
        owned = [(h, h.fence) for h in self.arena.matches.values() if h.owned and not h.ended]
        held = await store.renew_leases(self.owner)
        metrics.LEASES.set(len(held))
        for hosted, fence in owned:
            # Lost, unless it was taken back meanwhile (a new fence: that lease is current).
            if hosted.owned and hosted.fence == fence and hosted.match_id not in held:
                hosted.demote()
                self._background.spawn(self._follow(hosted))
        orphans = await store.orphaned_matches(limit=4 * CLAIMS_PER_ROUND)
        random.shuffle(orphans)  # replicas claiming at once mostly pick different ones
        claimed = 0
        for match_id in orphans[:CLAIMS_PER_ROUND]:
            try:
                lease = await store.acquire_lease(match_id, self.owner)
            except (StoreConflict, UnknownMatch):
                continue
            if lease.owner != self.owner.replica:
                continue
            try:
                hosted = await self.arena.get(match_id)
                await hosted.take_over(lease.fence)
            except StoreError as error:  # let another replica (or a later round) have it
                log.warning("take_over_failed", match_id=match_id, error=str(error))
                if match_id in self.arena.matches:
                    self.arena.matches[match_id].demote()
                with contextlib.suppress(StoreError):
                    await store.release_lease(match_id, self.owner)
                continue
            claimed += 1
        return claimed


async def renew_forever(owner: Owner, renew: Callable[[], Awaitable[None]], what: str) -> None:
    """As a replica, for ever: ``renew`` the leases on ``what`` this process directs (a
    tournament, a ladder) a third of a lease apart, jittered so that replicas do not renew in
    step. A round that fails is logged and the next one tries again: a store away for a while
    (its leases then run out, and another replica takes over) or a takeover that failed."""
    while True:
        await asyncio.sleep(owner.lease_ms / 3000 * random.uniform(0.8, 1.0))
        try:
            await renew()
        except StoreError as error:  # the database is away: next round
            log.warning(f"{what}_lease_round_failed", error=str(error))
        except Exception:  # one it could not take over: the next round tries again
            log.exception(f"{what}_lease_round_failed")
