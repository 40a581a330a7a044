"""A log entry, as a seat's stream sends it, folded into what the seat knows.

One fold for every reader of a seat's stream: the client library's play loop and a local
match played without a server, so that a bot sees the same ``SeatState`` either way.
"""

from __future__ import annotations

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from .state import SeatState


def fold_entry(state: SeatState, event: pb.Event) -> None:
    """Fold ``event`` (the next one after ``state.seq``) into ``state``: the rules' events are
    observed, the clocks folded (what each seat has left of its bank and round budget), the
    revealed seed kept, and a cancellation ends the match (with no winners)."""
    state.seq = event.seq
    state.note_clocks(event)
    decoded = codec.event_from_pb(event)
    if decoded is not None:
        state.observe(decoded)
    elif event.WhichOneof("kind") == "seed_revealed":
        state.seed = event.seed_revealed.seed
    elif event.WhichOneof("kind") == "match_cancelled":
        state.over = True
