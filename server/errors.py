"""The server's own errors: what was wrong with a request, raised wherever it is found (the
api, hosting) and mapped to a status code in one table (``api.status``).

```
Exception
├── BadRequest        the request is malformed                       INVALID_ARGUMENT
├── NotRunning        the match is waiting for seats, or has ended    FAILED_PRECONDITION
├── HeldBack          its duplicate group is still being played       FAILED_PRECONDITION
├── HouseBotsOff      house seats asked of a server that offers none  FAILED_PRECONDITION
├── Stale             expected_seq is behind the match                ABORTED
├── SeatTaken         the seat (or every open seat) is taken          ALREADY_EXISTS
├── RequestReused     a request id sent again for something else      ALREADY_EXISTS
├── Forbidden         a credential that does not allow this           PERMISSION_DENIED
├── Throttled         too many calls from one address                 RESOURCE_EXHAUSTED
├── HouseFull         the server plays as many house seats as it may  RESOURCE_EXHAUSTED
├── UnknownTournament no tournament has this id                       NOT_FOUND
├── DirectedElsewhere another replica directs this tournament/ladder  UNAVAILABLE
├── Moved             another replica owns the match now              UNAVAILABLE
└── Unreplayable      a stored log this server cannot replay          DATA_LOSS
```

The engine's errors (``OptionError``, ``MalformedAction``, ``IllegalAction``, ``NotYourTurn``)
and the store's (``store.errors``) have rows of their own in the same table.
"""

from __future__ import annotations


class BadRequest(Exception):
    """The request itself is malformed: the only server error that is the client's
    INVALID_ARGUMENT. A ``ValueError`` from deeper down is a fault of the server (INTERNAL),
    never blamed on the client."""


class RequestReused(Exception):
    """A request id already answered, sent again for a different request (ALREADY_EXISTS)."""

    def __init__(self, request_id: str, what: str) -> None:
        super().__init__(f"request_id {request_id!r} was already used {what}")


class Forbidden(Exception):
    """The credential is known but does not allow this (PERMISSION_DENIED)."""


class Stale(Exception):
    """The action was decided on an older ``seq`` than the match's."""


class NotRunning(Exception):
    """The match is waiting for seats, or has ended."""


class HeldBack(Exception):
    """The match belongs to a tournament's duplicate group that is still being played: its
    cards are for its seats and the operator only until the group has ended (docs/rules.md
    §4.10). The message names the match, its group and how far the group is."""


class HouseBotsOff(Exception):
    """House seats asked of a server whose operator has not turned house bots on."""


class HouseFull(Exception):
    """The server already plays as many house seats as its operator allows: until a match
    with house seats ends, no more."""


class SeatTaken(Exception):
    """The seat asked for is taken, or every open seat is."""


class Throttled(Exception):
    """Too many calls from one peer: retry after ``retry_after_ms``."""

    def __init__(self, message: str, retry_after_ms: int) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class Moved(Exception):
    """Another replica owns the match now; the client should retry (it will be forwarded)."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"match {match_id!r} moved to another replica: retry")


class UnknownTournament(LookupError):
    """No tournament has this id (NOT_FOUND)."""

    def __init__(self, tournament_id: str) -> None:
        super().__init__(f"no tournament {tournament_id!r}")


class UnknownLadder(UnknownTournament):
    """No ladder has this id (NOT_FOUND)."""

    def __init__(self, ladder_id: str) -> None:
        LookupError.__init__(self, f"no ladder {ladder_id!r}")


class DirectedElsewhere(Exception):
    """Another replica schedules this tournament or ladder: a call that changes it (or, for
    a ladder, enters it) must go there."""

    def __init__(self, key: str, address: str, noun: str = "tournament") -> None:
        super().__init__(
            f"{noun} {key!r} is directed by the replica at {address}: send the call there"
        )
        self.address = address


class Unreplayable(Exception):
    """A match's stored log does not replay here (bytes that do not decode, an action the
    rules refuse, settings this version no longer accepts): the data is not what this server
    wrote, or was written by another version. It costs that match alone: a restart resumes
    every other one. The message names the match and the kind of error, never the log's
    content (an engine's refusal can name a card)."""

    def __init__(self, match_id: str, error: BaseException) -> None:
        super().__init__(
            f"match {match_id}'s stored log cannot be replayed by this server"
            f" ({type(error).__name__}): its operator's log names it"
        )
        self.match_id = match_id
        self.error_type = type(error).__name__
