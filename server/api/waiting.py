"""How many matches anonymous creators may leave waiting for players, per address and in all.

Why: a created match holds memory and a row until it starts or expires (an hour by default),
and the per-address create rate alone let 40 addresses create 12,842 matches in a few seconds
(issue 29.2). A rate bounds how fast, not how many; this bounds how many: matches created
without the operator token and still waiting for a seat to be taken count against their
creator's address and against one budget for the whole server, shared as the spectator
streams are (:meth:`.streams.Streams._shared`): an address holds at most its share, and once
half the budget is taken at most :data:`.limits.FAIR_FLOOR`, so that newcomers always find
room. A match stops counting when it starts, ends or is cancelled; the operator's (and a
tournament's or a ladder's) never count. A match being created holds its place from the
check to its creation (:meth:`WaitingMatches.creating`): creates in flight together (the
store writes them in one batch) must not all pass one check that counts none of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import grpc

from .limits import fair_share
from .status import Refused

WAITING_PER_ADDRESS = 256
"""Matches one address may have waiting at once (a bot host sets up hundreds, then joins)."""

WAITING_TOTAL = 4096
"""Anonymously created matches waiting at once on this server, from every address together."""


class WaitingMatches:
    """The anonymously created matches still waiting, by the address that created them.

    ``still_waiting(match_id)`` says whether a counted match still waits: counts are pruned
    from it when a budget looks full, so nothing has to tell this class that a match
    started."""

    def __init__(
        self,
        still_waiting: Callable[[str], bool],
        per_address: int = WAITING_PER_ADDRESS,
        total: int = WAITING_TOTAL,
    ) -> None:
        self.still_waiting = still_waiting
        self.per_address = per_address
        self.total = total
        self._by_address: dict[str, set[str]] = {}
        self._creating: dict[str, int] = {}
        """Places held by matches being created, by address (:meth:`creating`)."""
        self.counted = 0
        """Matches counted now, every address's together (those being created too)."""

    @contextlib.contextmanager
    def creating(self, address: str | None) -> Iterator[Callable[[str], None]]:
        """Hold a place for one match ``address`` is creating (``None``: a proven caller,
        never counted), refused as :meth:`check` refuses; the function yielded names the
        match created, which keeps the place. A create that fails gives it back."""
        if address is None:
            yield lambda match_id: None
            return
        self.check(address)
        self._creating[address] = self._creating.get(address, 0) + 1
        self.counted += 1
        named: list[str] = []
        try:
            yield named.append
        finally:
            left = self._creating[address] - 1
            if left:
                self._creating[address] = left
            else:
                del self._creating[address]
            self.counted -= 1
            for match_id in named:
                self.add(address, match_id)

    def check(self, address: str) -> None:
        """Refuse RESOURCE_EXHAUSTED if ``address`` may not leave one more match waiting."""
        if self._held(address) >= self._cap(address) and (
            self._prune(address) + self._creating.get(address, 0) >= self._cap(address)
        ):
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this address has {self._held(address)} matches waiting for players, the"
                " most it may now: take their seats, cancel them or let them expire first",
            )
        if self.counted >= self.total and self._prune_all() >= self.total:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the server holds {self.total} matches waiting for players from all"
                " addresses, the most it may: try again later",
            )

    def add(self, address: str, match_id: str) -> None:
        ids = self._by_address.setdefault(address, set())
        if match_id not in ids:
            ids.add(match_id)
            self.counted += 1

    def _held(self, address: str) -> int:
        """The places ``address`` holds: its matches counted, and those being created."""
        return len(self._by_address.get(address, ())) + self._creating.get(address, 0)

    def _cap(self, address: str) -> int:
        """Its share leaves room for one more address than hold matches now; once half the
        budget is taken, the rest is for addresses holding no more than the floor."""
        holders = len((self._by_address.keys() | self._creating.keys()) - {address})
        return fair_share(self.per_address, self.total, self.counted, holders)

    def _prune(self, address: str) -> int:
        ids = self._by_address.get(address)
        if ids is None:
            return 0
        gone = {m for m in ids if not self.still_waiting(m)}
        ids -= gone
        self.counted -= len(gone)
        if not ids:
            del self._by_address[address]
        return len(ids)

    def _prune_all(self) -> int:
        for address in list(self._by_address):
            self._prune(address)
        return self.counted
