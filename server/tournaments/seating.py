"""Seating a tournament's match wherever its writer is.

Why the writer may be another replica: a director that takes a tournament over finds the
matches the last one created, some half seated, their leases still held, for a moment, by
the replica that died, or, for as long as it lives, by one that stopped directing. Every join
is idempotent (each seat's token derives from the tournament's secret), so it is safe to send
to the writer wherever it is (through the replicas' forwarding), and to try again until
either the writer answers or the dead one's lease runs out and the match comes here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from cardarena.v1 import service_pb2 as spb

from ..hosting import Arena, HostedMatch

RETRY_SECONDS: Final = 0.5

JoinElsewhere = Callable[[str, spb.JoinMatchRequest], Awaitable[bool]]
"""Send a join to the replica at an address: ``True`` once it is answered, ``False`` if that
replica does not answer (dead: its lease will run out); raises ``NotRunning`` if the match
has ended. The server wires it to its peers (``app``); a single process has no other writer."""


@dataclass(frozen=True)
class Join:
    seat: int
    name: str
    token: str
    join_secret: str


async def seat_all(
    arena: Arena, match_id: str, joins: Sequence[Join], elsewhere: JoinElsewhere | None
) -> HostedMatch | None:
    """Join every seat of ``joins`` at the match's writer; returns the match if this process
    wrote the joins (``None``: another replica did). Raises ``NotRunning`` if it has ended."""
    while True:
        writer = await arena.writer_of(match_id)
        if not isinstance(writer, str):
            for join in joins:
                await writer.join(
                    join.seat, join.name, token=join.token, join_secret=join.join_secret
                )
            return writer
        if elsewhere is not None and await _join_at(writer, match_id, joins, elsewhere):
            return None
        await asyncio.sleep(RETRY_SECONDS)


async def _join_at(
    address: str, match_id: str, joins: Sequence[Join], elsewhere: JoinElsewhere
) -> bool:
    for join in joins:
        request = spb.JoinMatchRequest(
            match_id=match_id,
            seat=join.seat,
            name=join.name,
            token=join.token,
            join_secret=join.join_secret,
        )
        if not await elsewhere(address, request):
            return False
    return True
