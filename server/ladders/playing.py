"""What a ladder is playing now: every match of its duplicate groups still being played, for
``GetLadder`` with ``include_playing`` (the web page's "playing now").

Why only ids, players and states: a group still being played is held back (docs/rules.md
§4.10), so nothing that shows what its hands made (totals, winners, hashes) may be listed;
its matches' ids and lineups are public (``ListMatches`` lists them too), and whoever opens
one is told by the embargo when it becomes readable. The list is read from the director's
groups in memory: a few times the ladder's concurrency at most, whatever its length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb

if TYPE_CHECKING:
    from .director import LadderDirector

STATUS = {
    "waiting": spb.MATCH_STATUS_UNSPECIFIED,
    "running": spb.MATCH_STATUS_RUNNING,
    "done": spb.MATCH_STATUS_ENDED,
}
"""A rotation's state in its group (``director.WAITING``, ``RUNNING``, ``DONE``) as listed."""


def playing(director: LadderDirector) -> list[lpb.LadderPlaying]:
    """Every match of each group not ended yet, in index order."""
    lines = []
    for number in sorted(director.groups):
        group = director.groups[number]
        for rotation, state in enumerate(group.state):
            index = number * director.size + rotation
            players, _ = director.seats(group, index)
            outcome = group.outcomes.get(index)
            match_id = director.match_ids.get(index) or (
                outcome.match_id if outcome is not None else ""
            )
            lines.append(
                lpb.LadderPlaying(
                    index=index,
                    group=number,
                    match_id=match_id,
                    players=list(players),
                    status=STATUS.get(state, spb.MATCH_STATUS_UNSPECIFIED),
                    cancelled=outcome is not None and outcome.cancelled,
                )
            )
    return lines
