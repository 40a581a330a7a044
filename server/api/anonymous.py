"""How many matches anonymous creators may hold on the server, per address and in all.

Why: a created match holds memory and a row until it ends, and the per-address create rate
alone let 40 addresses create 12,842 matches in a few seconds (issue 29.2). A rate bounds how
fast, not how many; this bounds how many: matches created without the operator token count
against their creator's address and against one budget for the whole server until they
**end** (they are cancelled, expire or are played out), shared as the spectator streams are
(:meth:`.streams.Streams._shared`): an address holds at most its share, and once half the
budget is taken at most :data:`.limits.FAIR_FLOOR`, so that newcomers always find room. A
match counts while it runs, too: a creator that took every seat of its own matches and left
them must not escape the budget by starting them (such a match, untimed, is ended by the
arena's idle expiry, :meth:`.Arena.expire_after`). The operator's (and a tournament's or a
ladder's) never count. A match being created holds its place from the check to its creation
(:meth:`AnonymousMatches.creating`): creates in flight together (the store writes them in one
batch) must not all pass one check that counts none of them.

The counts live in this process: a restart forgets them, and the matches it resumes count
for nobody until they end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import grpc

from .limits import fair_share
from .status import Refused

PER_ADDRESS = 256
"""Unended matches one address may have created at once (a bot host plays hundreds)."""

TOTAL = 4096
"""Anonymously created matches unended at once on this server, from every address together."""


class AnonymousMatches:
    """The anonymously created matches not yet ended, by the address that created them.

    ``unended(match_id)`` says whether a counted match still counts: counts are pruned with
    it when a budget looks full, so nothing has to tell this class that a match ended."""

    def __init__(
        self,
        unended: Callable[[str], bool],
        per_address: int = PER_ADDRESS,
        total: int = TOTAL,
    ) -> None:
        self.unended = unended
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
        """Refuse RESOURCE_EXHAUSTED if ``address`` may not hold one more match."""
        if self._held(address) >= self._cap(address) and (
            self._prune(address) + self._creating.get(address, 0) >= self._cap(address)
        ):
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this address has created {self._held(address)} matches not yet ended, the"
                " most it may now: play them out, cancel them or let them expire first",
            )
        if self.counted >= self.total and self._prune_all() >= self.total:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the server holds {self.total} unended matches created from all"
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
        gone = {m for m in ids if not self.unended(m)}
        ids -= gone
        self.counted -= len(gone)
        if not ids:
            del self._by_address[address]
        return len(ids)

    def _prune_all(self) -> int:
        for address in list(self._by_address):
            self._prune(address)
        return self.counted
