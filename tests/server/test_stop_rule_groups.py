"""A stop rule stops at a group boundary: once its verdict is reached, the duplicate group
already begun is finished (its rotations cancel the deal's luck only together) and no new
one starts; before the verdict every planned match may start. The whole path, a hosted SPRT
tournament whose every counted group is whole, is ``tests/integration/test_hosted_tournament.py``.
"""

from __future__ import annotations

from cardarena.competition import Decision, schedule
from cardarena.server.tournaments.spec import TournamentSpec
from cardarena.server.tournaments.stoprule import StopRule


def spec() -> TournamentSpec:
    return TournamentSpec(
        name="",
        game="triathlon",
        players=3,
        options={},
        move_ms=0,
        entrants=("a", "b", "c"),
        key_hashes=("", "", ""),
        deals=4,
        concurrency=1,
        forfeit_after=0,
        lowest_wins=False,
    )


def test_after_the_verdict_only_the_group_begun_is_finished() -> None:
    plans = schedule(bytes(32), deals=4, entrants=3, players=3)
    rule = StopRule(spec(), plans)
    assert [p.group for p in plans] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert not any(rule.finishing(plans, i) for i in range(len(plans)))  # no verdict yet
    rule.decision = Decision(llr=3.0, lower=-2.9, upper=2.9, samples=1, verdict="H1")
    # Decided with matches 0..4 started: 5 finishes group 1, 6 would begin group 2.
    assert rule.finishing(plans, 4) and rule.finishing(plans, 5)
    assert not rule.finishing(plans, 6)
    assert not rule.finishing(plans, 3) and not rule.finishing(plans, 0)
