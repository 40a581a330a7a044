"""Who sits where: a match's seats, who may take which, and whose token is whose.

Secrets are held only as hashes and compared in constant time, every seat compared each time
(so the time an answer takes says nothing about which seat, if any, matched).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from ..errors import Forbidden, SeatTaken
from .credentials import secret_hash, token_hash


@dataclass
class Seat:
    token_hash: bytes | None = None
    name: str = ""
    reserved: bytes | None = None
    """The hash of the join secret that alone may take this seat; ``None``: open to anyone."""


def seat_holding(seats: list[Seat], token: str) -> int | None:
    """The seat whose token this is; ``None`` if none."""
    digest = token_hash(token)
    found = None
    for index, seat in enumerate(seats):
        if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, digest):
            found = index
    return found


def seat_for(seats: list[Seat], seat: int | None, join_secret: str | None) -> int:
    """The seat a join may take: a reserved one only with its join secret (compared in
    constant time), otherwise an open one."""
    if join_secret:
        digest = secret_hash(join_secret)
        mine = [i for i, s in enumerate(seats) if hmac.compare_digest(s.reserved or b"", digest)]
        if seat is not None and seat not in mine:
            raise Forbidden(f"the join secret does not reserve seat {seat}")
        if not mine:
            raise Forbidden("the join secret reserves no seat of this match")
        candidates = [seat] if seat is not None else mine
    elif seat is not None:
        if seats[seat].reserved is not None:
            raise Forbidden(f"seat {seat} is reserved: join it with its join_secret")
        candidates = [seat]
    else:
        candidates = [i for i, s in enumerate(seats) if s.reserved is None]
        if not candidates:
            raise Forbidden("every seat is reserved: join with a join_secret")
    free = [i for i in candidates if seats[i].token_hash is None]
    if not free:
        if len(candidates) == 1:
            raise SeatTaken(f"seat {candidates[0]} is taken")
        raise SeatTaken("every open seat is taken")
    return free[0]
