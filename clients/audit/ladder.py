"""Auditing a ladder's signed snapshot: its signature, the digest of the matches it counts,
every match's log (pinned to the hash the snapshot records), and the board recomputed from
the logs alone, to the bit (docs/ladders.md, "Checking a snapshot").

Why the board can be recomputed exactly: the server folds the settled prefix of the ladder's
matches in index order with :mod:`cardarena.competition.ladder`, and so does this; nothing in
the board depends on when a match happened to end.
"""

from __future__ import annotations

from typing import Any

from cardarena.competition import Played
from cardarena.competition.ladder import Board, fold, split_player
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.signed import chain_match, first_matches_digest, ladder_message

from ..client.ladders import Snapshot
from .parallel import Job, audit_many
from .signature import TrustedKey, _signed_by
from .standings import wrong_way_to_win
from .tournament import TournamentAudit, fault_kinds, stated_settings

Logs = dict[str, Any]
"""Match id -> its GetMatchLogResponse, or why it could not be had."""


def audit_snapshot(
    snapshot: Snapshot, logs: Logs, *, keys: list[TrustedKey] | None = None, workers: int = 1
) -> TournamentAudit:
    """Every check of the module over a snapshot and its matches' logs, in hand."""
    ladder = snapshot.snapshot.ladder
    report = TournamentAudit(ladder.ladder_id, matches=len(snapshot.matches))
    if keys is not None:
        problem = _signature_finding(snapshot, keys)
        report.signature = "FAILED" if problem else "verified"
        if problem:
            report.find(problem)
    if not _lines_sound(snapshot, report):
        return report
    jobs = {
        line.match_id: Job(logs[line.match_id], line.match_id, bytes(line.last_hash), keys)
        for line in snapshot.matches
        if isinstance(logs.get(line.match_id), spb.GetMatchLogResponse)
    }
    verdicts = audit_many(list(jobs.values()), workers=workers)
    played: list[Played | None] = []
    for line in snapshot.matches:
        where = f"match {line.index} ({line.match_id})"
        job = jobs.get(line.match_id)
        if job is None:
            report.find(f"{where}: no log ({logs.get(line.match_id)})")
            played.append(None)
            continue
        failure = verdicts[line.match_id]
        if failure is not None:
            report.find(f"{where}: {failure.text}")
            played.append(None)
            continue
        played.append(_check_match(ladder, line, job.log, report))
    report.audited = len(jobs)
    check_groups(snapshot, {i: j.log for i, j in jobs.items()}, report)
    board = fold(played, lowest_wins=ladder.lowest_wins, group_size=ladder.players)
    _check_board(ladder, board, report)
    return report


def _signature_finding(snapshot: Snapshot, keys: list[TrustedKey]) -> str | None:
    if snapshot.signature is None:
        return "the snapshot carries no signature"
    signed = snapshot.signature
    message = ladder_message(snapshot.snapshot, signed.key_id)
    return _signed_by(keys, signed.key_id, bytes(signed.signature), message, "the snapshot:")


def _lines_sound(snapshot: Snapshot, report: TournamentAudit) -> bool:
    """Every counted match listed once, in order, and the digest over them the signed one."""
    ladder = snapshot.snapshot.ladder
    if ladder.players < 2:  # a group is a rotation per seat: none with fewer than two
        report.find(f"the snapshot's ladder seats {ladder.players} players")
        return False
    indices = [line.index for line in snapshot.matches]
    if indices != list(range(ladder.counted)):
        report.find(f"the snapshot counts {ladder.counted} matches, its lines do not list 0..")
        return False
    digest = first_matches_digest()
    for line in snapshot.matches:
        if line.group != line.index // ladder.players:
            report.find(f"match {line.index}: listed in group {line.group}")
        digest = chain_match(digest, line)
    if digest != snapshot.snapshot.matches_digest:
        report.find("the matches listed are not those the snapshot's digest covers")
        return False
    return True


def _check_match(
    ladder: lpb.LadderInfo,
    line: lpb.LadderMatch,
    log: spb.GetMatchLogResponse,
    report: TournamentAudit,
) -> Played | None:
    """What the snapshot says of a match whose log audited clean, against that log."""
    where = f"match {line.index} ({line.match_id})"
    started = pb.Event.FromString(log.entries[0].event).match_started
    if started.tournament_id != ladder.ladder_id:
        report.find(f"{where}: its log names competition {started.tournament_id!r}")
    for name, (said, logged) in stated_settings(ladder, started).items():
        if said != logged:
            report.find(f"{where}: played with {name} {logged!r}, the ladder says {said!r}")
    if line.cancelled != log.match.cancelled:
        report.find(f"{where}: the snapshot and the log disagree on whether it was cancelled")
    if log.match.cancelled:
        return None
    seats = sorted(log.match.seats, key=lambda s: s.seat)
    names = [s.name for s in seats]
    if names != list(line.players):
        report.find(
            f"{where}: its seats are held by {names}, the snapshot says {list(line.players)}"
        )
    return Played(
        kinds=fault_kinds(log, len(seats)),
        index=line.index,
        group=line.group,
        entrants=tuple(names),
        totals=tuple(codec.score_from_pb(t) for t in log.match.totals),
        winners=tuple(log.match.winners),
        faults=tuple(s.faults for s in seats),
        forfeited=tuple(s.forfeited for s in seats),
    )


def check_groups(
    snapshot: Snapshot, logs: dict[str, spb.GetMatchLogResponse], report: TournamentAudit
) -> None:
    """Every duplicate group is what a ladder plays: each rotation dealt from one seed, and
    its lineup turned one seat further each rotation (the board's duplicate scoring rests on
    it; without this a server could pair a deal with its own mirror of another)."""
    size = snapshot.snapshot.ladder.players
    groups: dict[int, list[lpb.LadderMatch]] = {}
    for line in snapshot.matches:
        if not line.cancelled and line.match_id in logs:
            groups.setdefault(line.group, []).append(line)
    for group, lines in sorted(groups.items()):
        seeds = {bytes(logs[line.match_id].seed) for line in lines}
        if len(seeds) > 1:
            report.find(f"group {group}: its rotations are not dealt from one seed")
        first = lines[0]
        lineup = list(first.players)
        shift = first.index % size
        lineup = lineup[-shift:] + lineup[:-shift] if shift else lineup  # rotation 0's
        for line in lines:
            turn = line.index % size
            if list(line.players) != lineup[turn:] + lineup[:turn]:
                report.find(
                    f"match {line.index} ({line.match_id}): seats {list(line.players)} are no"
                    f" rotation of group {group}'s lineup {lineup}"
                )


def _check_board(ladder: lpb.LadderInfo, board: Board, report: TournamentAudit) -> None:
    """The signed board, its totals and row by row, against the one folded from the logs:
    every figure, its flags, and whose player each row is. (Whether a row is ``retired``
    depends on which version of its entrant entered last, which no log records: an entrant
    may go back to an older version before its newer one has played. Only the signature
    vouches for it.)"""
    wrong = wrong_way_to_win(ladder.game, ladder.lowest_wins)
    if wrong:
        report.find(f"the snapshot {wrong}")
    if ladder.voided != board.voided:
        report.find(
            f"the snapshot says {ladder.voided} of its matches counted for nothing, the logs"
            f" give {board.voided}"
        )
    mine = {row.player: row for row in board.rows.values()}
    shown = {row.player: row for row in ladder.board}
    if set(mine) != set(shown) or len(shown) != len(ladder.board):
        listed = sorted(row.player for row in ladder.board)
        report.find(f"the board lists {listed}, the logs give {sorted(mine)}")
        return
    for player, row in shown.items():
        folded = mine[player]
        rating = board.rating(player)
        entrant, version = split_player(player, ladder.entrants)
        expected = (
            (entrant, version, entrant in ladder.entrants),
            folded.matches,
            folded.groups,
            folded.wins,
            folded.faults,
            folded.forfeits,
            max(folded.last_index, 0),
            None if rating is None else (rating.mu, rating.sigma, rating.ordinal),
            (folded.mean is not None, folded.mean),
            (folded.interval is not None, folded.interval),
        )
        given = (
            (row.entrant, row.version, True),
            row.matches,
            row.groups,
            row.wins,
            row.faults,
            row.forfeits,
            row.last_match,
            (row.mu, row.sigma, row.ordinal),
            # A flag cleared over its figure, or a figure left behind a cleared flag, differs.
            (row.has_mean, row.mean if row.has_mean or row.mean else None),
            (
                row.has_interval,
                (row.ci_low, row.ci_high)
                if row.has_interval or row.ci_low or row.ci_high
                else None,
            ),
        )
        if given != expected:
            report.find(f"{player}: the board says {given}, the logs give {expected}")
    order = [row.player for row in board.ranked()]
    if [row.player for row in ladder.board] != order:
        report.find(f"the board's order is not by rating: the logs give {order}")
