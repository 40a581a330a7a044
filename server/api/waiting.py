"""Spectators who find a match's places full wait for one, instead of asking again and again.

Why: every ask is a whole gRPC call, and a call costs the server about 1.5 ms of CPU when
calls come a few hundred a second (grpc.aio's own work: a bare server answering an empty
unary call ten times a second spends that much a call; only a saturated one gets it down to
about 0.3 ms). Under the flood benchmark's spectators (640 streams asked for a match with
64 places, each asking again a second after its refusal), the refused asks came about 180 a
second even with the refusal said after a pause of 1 to 3 s: 20% of a core, and the match's
players' p99 2.2-3.2x its quiet figure. Told to wait instead, a spectator turned away costs
one call per wait, not one per ask.

A spectator's call refused for want of a place of its match (the match's own 64, its
address's 8 there, or, one that did not ask for batches, the match's 2 unbatched) waits up to :data:`WAIT_SECONDS` (10 to 20 s, drawn). When a spectator's
stream of the match ends, the longest-waiting whose address may hold one more place of it is
woken (an unbatched one only for an unbatched place) and asks again (first in the queue again if someone else took the place meanwhile). A
match that ends frees its places as its streams end: those it wakes are told that it ended
(after a pause drawn from :data:`END_SPREAD`), and so is each of the rest when its wait is
over. Not all at once at the end: the flood benchmark's victim matches end every 8 s, and
its 576 waiting spectators told together came back together, one call each per match (about
130 calls a second, the players' p99 2.2-4.2x quiet); left to their own deadlines they came
back about 30 times a second. The waits are bounded like any held call: at most
``per_address`` of one address and ``total`` of the server at once; beyond that the refusal
comes as before.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

WAIT_SECONDS: Final = 20.0
"""The longest a spectator waits for a place before it is refused (below the gRPC-Web
gateway's 30 s for a stream's first bytes)."""
WAIT_SPREAD: Final = (0.5, 1.0)
"""A wait lasts :data:`WAIT_SECONDS` times a factor drawn uniformly from this range: a crowd
that came together (the flood's spectators, all turned away as a match began) would
otherwise all be refused together, and come back together."""
END_SPREAD: Final = (0.5, 3.0)
"""Seconds, drawn uniformly, before a spectator woken by a place its match's end freed hears
that the match ended, so that the crowd woken by the end is not answered in one turn."""


@dataclass(eq=False)
class Waiter:
    """One spectator's call waiting for a place; ``woken`` is set when one may be free."""

    address: str
    batched: bool = True
    """Whether it asked for batches (``WatchMatchRequest.batched``): one that did not needs one
    of the match's unbatched places."""
    woken: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class WaitingRoom:
    """The spectators waiting for places, a queue a match."""

    def __init__(
        self, seconds: float = WAIT_SECONDS, per_address: int = 16, total: int = 1024
    ) -> None:
        self.seconds = seconds
        self.per_address = per_address
        self.total = total
        self.held = 0
        """Waits held now, every address's together."""
        self._held: Counter[str] = Counter()
        self._queues: dict[str, deque[Waiter]] = {}

    def admits(self, address: str) -> bool:
        """Whether ``address`` may wait (it and the server hold fewer waits than they may)."""
        return self._held[address] < self.per_address and self.held < self.total

    def waiting(self, match_id: str) -> int:
        """How many wait for a place of ``match_id``."""
        return len(self._queues.get(match_id, ()))

    async def wait(
        self, match_id: str, address: str, deadline: float, *, first: bool, batched: bool = True
    ) -> bool:
        """Wait until a place of ``match_id`` may be free (``True``) or the loop's clock
        reaches ``deadline`` (``False``); ``first``: at the head of the queue (it was woken
        before and someone else took the place)."""
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        waiter = Waiter(address, batched)
        queue = self._queues.setdefault(match_id, deque())
        if first:
            queue.appendleft(waiter)
        else:
            queue.append(waiter)
        self._held[address] += 1
        self.held += 1
        try:
            await asyncio.wait((waiter.woken,), timeout=remaining)
            return waiter.woken.done()
        except asyncio.CancelledError:
            if waiter.woken.done():  # woken, but its call is gone: the place is someone's
                self.freed(match_id, lambda waiter: True)
            raise
        finally:
            self.held -= 1
            self._held[address] -= 1
            if not self._held[address]:
                del self._held[address]
            if not waiter.woken.done():
                queue.remove(waiter)
            if not queue and self._queues.get(match_id) is queue:
                del self._queues[match_id]

    def freed(self, match_id: str, may_hold: Callable[[Waiter], bool]) -> None:
        """A place of ``match_id`` was freed: wake the longest-waiting spectator that
        ``may_hold`` it (its address holds fewer than it may there, and an unbatched one's
        kind too)."""
        queue = self._queues.get(match_id)
        if not queue:
            return
        for waiter in queue:
            if may_hold(waiter):
                queue.remove(waiter)
                waiter.woken.set_result(None)
                return
