"""The store's errors: one family (:class:`StoreError`), each kind a status the service maps.

``StoreError`` itself means the database is away or failed (a write may or may not stand);
the subclasses are answers about the data: a conflict (another writer got there first, or the
match has ended), a lost lease, an unknown match, a request already applied, a bad page token.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base of every error the store raises; also wraps unexpected database errors."""


class StoreClosed(StoreError):
    """The store is not open (never opened, closing, or its writer thread has stopped)."""


class StoreConflict(StoreError):
    """The write contradicts what is stored: a duplicate id, a taken seat, a stale
    ``expected_seq`` (another writer got there first), or a write to an ended match."""


class LeaseLost(StoreConflict):
    """The write was fenced by a lease that another replica has since taken over."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"this replica no longer owns match {match_id!r}")
        self.match_id = match_id


class UnknownMatch(StoreError, KeyError):
    """No match with this id exists. A ``KeyError`` too, so generic lookups can catch it."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"no match {match_id!r}")
        self.match_id = match_id

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0])


class DuplicateRequest(StoreError):
    """This request id was already applied to this match; nothing was written.

    Carries the seqs the original request wrote (and the seat it was recorded for), so the
    server can answer the retry exactly as it answered, or would have answered, the original.
    """

    def __init__(self, first_seq: int, last_seq: int, seat: int | None = None) -> None:
        super().__init__(f"request already applied as events {first_seq}..{last_seq}")
        self.first_seq = first_seq
        self.last_seq = last_seq
        self.seat = seat


class InvalidPageToken(StoreError, ValueError):
    """A page token that this store did not produce: the client's mistake."""
