"""A ladder snapshot's duplicate groups are held to what a ladder plays: one seed for every
rotation of a group, its lineup turned one seat further each rotation. A server signs the
lines it lists, so without this check it could pair a deal with a lineup of its choosing
and the audit would not see it (an adversarial review's note)."""

from __future__ import annotations

from cardarena.clients.audit.ladder import check_groups
from cardarena.clients.audit.tournament import TournamentAudit
from cardarena.clients.client.ladders import Snapshot
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb


def snapshot(*lineups: list[str]) -> Snapshot:
    made = lpb.LadderSnapshot(ladder=lpb.LadderInfo(ladder_id="l", players=3))
    lines = [
        lpb.LadderMatch(index=i, group=i // 3, match_id=f"m{i}", players=players)
        for i, players in enumerate(lineups)
    ]
    return Snapshot(made, lines, None)


def logs(*seeds: bytes) -> dict[str, spb.GetMatchLogResponse]:
    return {f"m{i}": spb.GetMatchLogResponse(seed=seed) for i, seed in enumerate(seeds)}


def findings(taken: Snapshot, given: dict[str, spb.GetMatchLogResponse]) -> list[str]:
    report = TournamentAudit("l")
    check_groups(taken, given, report)
    return report.findings


ROTATED = (["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"])


def test_a_group_dealt_from_one_seed_in_rotations_is_clean() -> None:
    assert findings(snapshot(*ROTATED), logs(b"s" * 32, b"s" * 32, b"s" * 32)) == []
    later = snapshot(*ROTATED, ["d", "a", "b"], ["a", "b", "d"], ["b", "d", "a"])
    assert findings(later, logs(*[b"s" * 32] * 3, *[b"t" * 32] * 3)) == []


def test_another_seed_or_a_lineup_out_of_turn_is_a_finding() -> None:
    seeds = findings(snapshot(*ROTATED), logs(b"s" * 32, b"s" * 32, b"t" * 32))
    assert seeds == ["group 0: its rotations are not dealt from one seed"]
    swapped = snapshot(["a", "b", "c"], ["c", "b", "a"], ["c", "a", "b"])
    (found,) = findings(swapped, logs(*[b"s" * 32] * 3))
    assert found.startswith("match 1 (m1): seats ['c', 'b', 'a'] are no rotation")
