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
address's 8 there, or, one that did not ask for batches, the match's 2 unbatched) waits up
to :data:`WAIT_SECONDS` (10 to 20 s, drawn). When a spectator's stream of the match ends,
one waiter is woken and asks again: of the addresses whose oldest waiter may hold the place
(the address holds fewer there than it may; an unbatched one needs an unbatched place), the
one that holds the fewest places of the match, the longest unserved among equals, and its
oldest waiter (first again if someone else took the place meanwhile). By address, not by
arrival: a flood's hundreds of waits from a few dozen addresses do not stand before a
newcomer's from another. A match that ends frees its places as its streams end: those it
wakes are told that it ended (after a pause drawn from :data:`END_SPREAD`), and so is each
of the rest when its wait is over. Not all at once at the end: the flood benchmark's victim
matches end every 8 s, and its 576 waiting spectators told together came back together, one
call each per match (about 130 calls a second, the players' p99 2.2-4.2x quiet); left to
their own deadlines they came back about 30 times a second. The waits are bounded like any
held call: at most ``per_address`` of one address and ``total`` of the server at once;
beyond that the refusal comes as before.
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
    """The spectators waiting for places: a match's, by address, each address's oldest
    first."""

    def __init__(
        self, seconds: float = WAIT_SECONDS, per_address: int = 16, total: int = 1024
    ) -> None:
        self.seconds = seconds
        self.per_address = per_address
        self.total = total
        self.held = 0
        """Waits held now, every address's together."""
        self._held: Counter[str] = Counter()
        self._queues: dict[str, dict[str, deque[Waiter]]] = {}
        """Each match's waiters by address, the addresses in the order they were last served
        (or began to wait)."""
        self._counts: Counter[str] = Counter()

    def admits(self, address: str) -> bool:
        """Whether ``address`` may wait (it and the server hold fewer waits than they may)."""
        return self._held[address] < self.per_address and self.held < self.total

    def waiting(self, match_id: str) -> int:
        """How many wait for a place of ``match_id``."""
        return self._counts[match_id]

    async def wait(
        self, match_id: str, address: str, deadline: float, *, first: bool, batched: bool = True
    ) -> bool:
        """Wait until a place of ``match_id`` may be free (``True``) or the loop's clock
        reaches ``deadline`` (``False``); ``first``: at the head of its address's queue (it
        was woken before and someone else took the place)."""
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        waiter = Waiter(address, batched)
        addresses = self._queues.setdefault(match_id, {})
        queue = addresses.setdefault(address, deque())
        if first:  # back where it was: first of its address, its address first among equals
            queue.appendleft(waiter)
            if next(iter(addresses)) != address:
                self._queues[match_id] = {address: addresses.pop(address), **addresses}
        else:
            queue.append(waiter)
        self._counts[match_id] += 1
        self._held[address] += 1
        self.held += 1
        try:
            await asyncio.wait((waiter.woken,), timeout=remaining)
            return waiter.woken.done()
        except asyncio.CancelledError:
            if waiter.woken.done():  # woken, but its call is gone: the place is someone's
                self.freed(match_id, lambda waiter: True, lambda address: 0)
            raise
        finally:
            self.held -= 1
            self._held[address] -= 1
            if not self._held[address]:
                del self._held[address]
            if not waiter.woken.done():
                queue.remove(waiter)
                self._forget(match_id, address, queue)

    def freed(
        self,
        match_id: str,
        may_hold: Callable[[Waiter], bool],
        holds: Callable[[str], int],
    ) -> None:
        """A place of ``match_id`` was freed: wake the oldest waiter of the address that
        ``holds`` the fewest places of the match (the longest unserved among equals) whose
        oldest ``may_hold`` it (its address holds fewer there than it may; an unbatched one,
        an unbatched place is free). By address, not by arrival: a flood's hundreds of waits
        from a few dozen addresses do not stand before a newcomer from another."""
        addresses = self._queues.get(match_id)
        if not addresses:
            return
        chosen, fewest = None, 0
        for address, queue in addresses.items():
            if may_hold(queue[0]):
                held = holds(address)
                if chosen is None or held < fewest:
                    chosen, fewest = address, held
        if chosen is None:
            return
        queue = addresses.pop(chosen)
        queue.popleft().woken.set_result(None)
        if queue:
            addresses[chosen] = queue  # served: last among the addresses that wait
        self._forget(match_id, chosen, queue)

    def _forget(self, match_id: str, address: str, queue: deque[Waiter]) -> None:
        """One waiter of ``address`` at ``match_id`` no longer waits (``queue``: its address's
        waiters left)."""
        self._counts[match_id] -= 1
        if not self._counts[match_id]:
            del self._counts[match_id]
            self._queues.pop(match_id, None)
        elif not queue:
            addresses = self._queues.get(match_id)
            if addresses is not None and addresses.get(address) is queue:
                del addresses[address]
