"""When a hosted match deals: only once every seat has joined, from the seats' mixed entropy.

RULES.md §4 ("Contributed entropy"): each seat may contribute 32 bytes when it joins; the
match's deal seed mixes the committed seed with every contribution, so the first deal waits
for the last seat. The engine is started without its deal seed (``dealing=False``) and given
it here. The owner of a match, a replica following it and a rebuild from the store all read
the same log entries through :func:`follow`, so all three deal at the same entry.

Logs written before contributions existed dealt at creation, before the seats joined; such a
log's first chance entry deals the engine from the seed itself (nobody had contributed).
"""

from __future__ import annotations

from typing import Final

from cardarena.engine import Match, mix_seed
from cardarena.engine import events as ev
from cardarena.engine.fairdeal import SEED_SIZE
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

CONTRIBUTION_BYTES: Final = SEED_SIZE
"""A contribution is as long as a seed."""
CHANCE: Final = frozenset({"dealer_drawn", "trump_drawn", "dealt"})


class Joins:
    """Which seats the log says have joined, and what each contributed."""

    __slots__ = ("contributions", "joined")

    def __init__(self, players: int) -> None:
        self.joined = [False] * players
        self.contributions: list[bytes | None] = [None] * players

    @property
    def complete(self) -> bool:
        return all(self.joined)

    def note(self, joined: pb.SeatJoined) -> None:
        self.joined[joined.seat] = True
        if joined.contribution:
            self.contributions[joined.seat] = bytes(joined.contribution)

    def deal_seed(self, seed: bytes) -> bytes:
        return mix_seed(seed, self.contributions)


def follow(engine: Match, joins: Joins, seed: bytes, entry: pb.Event) -> list[ev.Event]:
    """Bring ``engine`` and ``joins`` up to ``entry``, the next entry of the match's log:
    apply the action it records, note a join, and deal once the last seat has joined (or an
    old log deals). Returns the engine events a deal produced (for the owner to log)."""
    kind = entry.WhichOneof("kind")
    if kind == "seat_joined":
        joins.note(entry.seat_joined)
        if joins.complete and not engine.dealing:
            return engine.deal_from(joins.deal_seed(seed))
        return []
    if kind in CHANCE and not engine.dealing:  # a log from before contributions
        engine.deal_from(seed)
        return []
    decoded = codec.event_from_pb(entry)
    recorded = None if decoded is None else engine.recorded_action(decoded)
    if recorded is not None:
        engine.apply(*recorded)
    return []
