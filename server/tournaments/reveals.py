"""Revealing a duplicate group's shared seed at the replica that writes each of its matches.

Why not simply on the match at hand: a director reveals a group's seed once the group's last
match has ended, but after a failover its ended matches may still be leased to the replica
that died (until the lease runs out) or be held by another; a reveal asked of a copy this
replica only follows writes nothing. So a match counts as revealed only once its log holds
the reveal, and the director tries what is left again until it does: at the latest when the
dead owner's lease has lapsed and this replica takes the match over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping
from typing import Any

from ..hosting import Arena

REVEAL_RETRY_SECONDS = 0.5
"""How soon a director tries again the reveals another replica still held."""


class Reveals:
    """A tournament's matches whose seed is revealed, and the revealing of the others."""

    def __init__(self, arena: Arena, log: Any) -> None:
        self.arena = arena
        self.log = log
        self.done: set[int] = set()
        """Plan indices of the ended matches whose log holds their reveal (final logs)."""
        self.left = False
        """Whether a reveal asked for is still to be written (another replica held it)."""

    async def reveal(
        self,
        match_ids: Mapping[int, str],
        indices: Iterable[int],
        *,
        skip: Container[int],
        last_hashes: dict[int, bytes],
    ) -> bool:
        """Reveal the seed of each of these matches (but those in ``skip``, still running)
        that is not revealed, where this replica writes it, noting each one's last hash;
        whether any is left to try again."""
        left = False
        for index in indices:
            match_id = match_ids.get(index)
            if match_id is None or index in skip or index in self.done:
                continue
            last_hash = await reveal_at_writer(self.arena, match_id)
            if last_hash is None:
                left = True
                continue
            self.done.add(index)
            last_hashes[index] = last_hash
        return left

    async def reveal_held(self, match_ids: Mapping[int, str], indices: Iterable[int]) -> None:
        """Following another replica's direction: reveal those of these matches (of complete
        groups) that this replica writes. A failover can leave a match with a replica that does
        not direct its tournament, where its director cannot write it; its writer can."""
        for index in indices:
            hosted = self.arena.matches.get(match_ids.get(index, ""))
            if hosted is None or index in self.done:
                continue
            if hosted.owned and hosted.ended and not hosted.revealed:
                await hosted.reveal_seed()
            if hosted.revealed:
                self.done.add(index)

    async def until_done(self, attempt: Callable[[], Awaitable[bool]]) -> None:
        """Make ``attempt`` (which says whether reveals are left) until none is, for a few
        lease periods at most: by then a dead owner's leases have lapsed (alone it writes
        every match itself, and waits for nothing)."""
        owner = self.arena.owner
        patience = 0.0 if owner is None else 3 * owner.lease_ms / 1000
        deadline = asyncio.get_running_loop().time() + patience
        while await attempt():
            if asyncio.get_running_loop().time() > deadline:
                self.log.warning("seeds_unrevealed", waited_seconds=patience)
                return
            await asyncio.sleep(REVEAL_RETRY_SECONDS)


async def reveal_at_writer(arena: Arena, match_id: str) -> bytes | None:
    """Reveal ``match_id``'s seed if this replica writes it (taking its lease over if nobody
    holds it live): the hash of its log's last entry once the log holds the reveal; ``None``
    if another replica still writes the match, or it has not ended (try again later)."""
    writer = await arena.writer_of(match_id)
    if isinstance(writer, str):
        return None
    await writer.reveal_seed()
    return writer.last_hash if writer.revealed else None
