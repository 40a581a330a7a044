"""Which connections the gateway serves when strangers hold many: fair admission.

A cap on connections alone protects the process, not the people: one stranger opening
``max_connections`` idle connections (and opening them again as they time out) would lock
every new browser out, and a connection holding nothing but a place is worth less than a
newcomer's. So, beside the cap:

* **Idle connections make room.** A connection is *idle* while it waits for a request head
  (its first, or the next one on a kept-alive connection), *busy* from the moment its head is
  read until its answer is written. When the cap is reached, a newcomer is not refused while
  an address holding more than the newcomer's would then hold has an idle connection: the
  longest idle of the address holding the most is shed, and the newcomer takes its place. So
  a browser gets in past any number of idle connections, while flooders holding as many as
  each other are refused instead of shedding each other's connections for ever (a storm of
  reconnections that cost the event loop ~250 µs each). A busy connection is never shed: a
  request in flight (a unary call, a spectator's stream) always finishes.
* **A fair share per address.** Below half the cap anyone is admitted; from half the cap on,
  an address already holding :func:`address_share` connections (``max(4, cap // 8)``: 32 of
  the default 256, five browsers' worth) is refused with 503, so that no address can take
  the other half while others wait, whatever its connections are doing. Alone, one address
  can thus hold half the cap (or its share, if that is more), never more. Busy connections count too: a flood of slow bodies
  or streams from one address is held to its share as well.
* **An address** is what the server's limits count (``limits.counted_text``): an IPv4
  address, or an IPv6 client's /64, which one subscriber holds whole.
* **Trusted proxies** (``--trusted-proxies``) carry many clients on their connections: they
  are held to the cap, not to one address's share (their idle connections may still be shed).

The policy is kept here, apart from sockets and tasks: :class:`Admission` decides and keeps
count, the gateway closes what it is told to shed.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable
from typing import Literal

from ..limits import TrustedProxies, counted_text, ip_address

SHARE_FLOOR = 4
"""What any address may hold however full the gateway is (a browser opens up to six
connections to one host, and reuses idle ones first)."""


def address_share(max_connections: int) -> int:
    """How many connections one address may hold once the gateway is half full."""
    return max(SHARE_FLOOR, max_connections // 8)


@dataclasses.dataclass(eq=False)
class Slot:
    """One admitted connection: its client's address and, while it waits for a request head,
    since when (``None``: busy, a request in flight). ``shed`` is what closes it (set by the
    gateway once its task exists)."""

    host: str
    idle_since: float | None = None
    shed: Callable[[], object] = lambda: None

    @property
    def idle(self) -> bool:
        return self.idle_since is not None


Refusal = Literal["full", "share"]
"""Why a newcomer is refused: every connection is busy, or its address holds its share."""


class Admission:
    """The admitted connections, by address; decides who gets in and who makes room."""

    def __init__(
        self,
        max_connections: int,
        proxies: TrustedProxies | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_connections = max_connections
        self.share = address_share(max_connections)
        self.proxies = proxies or TrustedProxies()
        self.clock = clock
        self.slots: set[Slot] = set()
        self.held: Counter[str] = Counter()
        self._idle: dict[str, dict[Slot, None]] = {}
        """Each address's idle connections, longest idle first (a flood may hold hundreds:
        choosing whom to shed must not walk them all)."""
        self.shed_count = 0
        """Idle connections closed to make room, since start."""
        self.refused: Counter[Refusal] = Counter()
        """Newcomers refused with 503, by reason, since start."""

    def __len__(self) -> int:
        return len(self.slots)

    def admit(self, peer: str) -> Slot | Refusal:
        """A slot for a new connection from the address ``peer`` (idle until its first head
        arrives), having shed an idle one if the gateway was full; or why it is refused."""
        address = ip_address(peer)
        host = peer if address is None else counted_text(address)
        trusted = address is not None and self.proxies.trusts(address)
        if not trusted and self._over_share(host):
            self.refused["share"] += 1
            return "share"
        if len(self.slots) >= self.max_connections:
            victim = self._victim(host)
            if victim is None:
                self.refused["full"] += 1
                return "full"
            self.release(victim)
            self.shed_count += 1
            victim.shed()
        slot = Slot(host)
        self.slots.add(slot)
        self.held[host] += 1
        self.idle(slot)
        return slot

    def release(self, slot: Slot) -> None:
        """``slot``'s connection is closed (or being closed): its place is free. Idempotent."""
        if slot not in self.slots:
            return
        self.busy(slot)
        self.slots.discard(slot)
        self.held[slot.host] -= 1
        if not self.held[slot.host]:
            del self.held[slot.host]

    def idle(self, slot: Slot) -> None:
        """``slot`` waits for a request head again: it may be shed from now on."""
        if slot not in self.slots:
            return
        self.busy(slot)
        slot.idle_since = self.clock()
        self._idle.setdefault(slot.host, {})[slot] = None

    def busy(self, slot: Slot) -> None:
        """``slot`` has a request in flight: it is never shed until it is idle again."""
        if slot.idle_since is None:
            return
        slot.idle_since = None
        idle = self._idle[slot.host]
        del idle[slot]
        if not idle:
            del self._idle[slot.host]

    def _over_share(self, host: str) -> bool:
        return self.held[host] >= self.share and len(self.slots) >= self.max_connections // 2

    def _victim(self, newcomer: str) -> Slot | None:
        """The idle connection to shed for ``newcomer``: the longest idle of the address
        holding the most (the earliest idle on a tie), if that address holds more than the
        newcomer's would once admitted; else none."""
        if not self._idle:
            return None
        most = self.held[max(self._idle, key=self.held.__getitem__)]
        if most <= self.held[newcomer] + 1:
            return None  # the common case under a flood: decided without walking anyone
        host = min((h for h in self._idle if self.held[h] == most), key=self._oldest)
        return next(iter(self._idle[host]))

    def _oldest(self, host: str) -> float:
        """Since when ``host``'s longest idle connection has been idle."""
        return next(iter(self._idle[host])).idle_since or 0.0
