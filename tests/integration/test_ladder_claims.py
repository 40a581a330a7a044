"""A ladder snapshot's board, every field of every row, held to the logs with no key (a
review's finds): which way the game is won, each player's rating and its ordinal, its
entrant and version, its last match, the flags of its mean and interval, one row each.

A small real ladder (Triathlon, three entrants at three seats, random bots) is played to
three duplicate groups or more, closed, and its snapshot written by ``cardarena ladder
snapshot``; each test forges the board (the signature dropped, as a forger without the key
would; the match lines and their digest untouched) and audits it against the server's logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.clients.audit.tournament import fault_kinds
from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.cli import main
from cardarena.clients.cli.ladder import snapshot_json, snapshot_of
from cardarena.clients.client import ArenaClient
from cardarena.clients.logs.bundle import fetch_logs
from cardarena.clients.tournament.entrant import LadderEntry, play_entrant
from cardarena.competition import Played
from cardarena.competition.ladder import fold
from cardarena.v1 import codec
from cardarena.v1 import ladder_pb2 as lpb

from ..calls import run
from ..serverproc import ServerProcess
from ..waiting import eventually

pytestmark = pytest.mark.integration

ENTRANTS = ("e1", "e2", "e3")


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    work = tmp_path_factory.mktemp("ladder")
    with ServerProcess(work / "data") as server:
        out = io.StringIO()
        argv = ["ladder", "create", "--server", server.address, "--game", "triathlon"]
        argv += ["--players", "3", "--keys", str(work / "keys"), "--move-ms", "5000"]
        argv += ["--creator-secret-file", str(work / "c")]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main([*argv, *(a for n in ENTRANTS for a in ("--entrant", n))]) == 0
        ladder_id = out.getvalue().strip()
        keys = {n: (work / "keys" / f"{n}.key").read_text().strip() for n in ENTRANTS}

        async def scenario() -> None:
            async with ArenaClient(server.address, retry_for=60) as client:
                tasks = [
                    asyncio.create_task(
                        play_entrant(
                            client, ladder_id, keys[n], lambda _a: PythonDecider(RandomBot),
                            reconnect_for=60, capacity=2, ladder=LadderEntry(""),
                            log=lambda _t: None,
                        )
                    )
                    for n in ENTRANTS
                ]  # fmt: skip

                async def counted() -> bool:
                    return (await client.ladders.get(ladder_id)).counted >= 9

                await eventually(counted, within=120, what="9 matches counted")
                secret = (work / "c").read_text().strip()
                await client.ladders.close(ladder_id, secret=secret)
                await asyncio.wait_for(asyncio.gather(*tasks), 60)

        run(scenario(), seconds=240)
        snap = work / "snapshot.json"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["ladder", "snapshot", ladder_id, "--server", server.address,
                         "--out", str(snap)]) == 0  # fmt: skip
        yield snap, server.address


def audit_forged(snap: Path, info: lpb.LadderInfo | None = None) -> tuple[int, str]:
    data = json.loads(snap.read_text())
    taken = snapshot_of(data)
    if info is not None:
        taken.snapshot.ladder.CopyFrom(info)
    forged = snapshot_json(type(taken)(taken.snapshot, taken.matches, None), data["server"])
    path = snap.with_name("forged.json")
    path.write_text(json.dumps(forged))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["audit", "--ladder", str(path)])
    return code, out.getvalue()


def board(snap: Path) -> lpb.LadderInfo:
    return snapshot_of(json.loads(snap.read_text())).snapshot.ladder


def found(snap: Path, info: lpb.LadderInfo, *words: str) -> None:
    code, out = audit_forged(snap, info)
    assert code == 1 and "all clean" not in out, out
    for word in words:
        assert word in out, (word, out)


def test_the_snapshot_as_written_audits_clean(ladder: tuple[Path, str]) -> None:
    snap, _ = ladder
    info = board(snap)
    assert info.counted >= 9 and all(r.has_interval for r in info.board), info
    code, out = audit_forged(snap)
    assert code == 0 and "all clean" in out, out
    assert "the board recomputed (retired and entrants on its word)" in out, out


def test_the_ordinal_the_board_is_ranked_by_is_the_ratings(ladder: tuple[Path, str]) -> None:
    snap, _ = ladder
    info = board(snap)
    info.board[-1].ordinal = 99.0
    found(snap, info, f"{info.board[-1].player}: the board says")


@pytest.mark.parametrize(
    ("name", "value"), [("entrant", "e2"), ("version", "v9"), ("last_match", 12345)]
)
def test_whose_row_it_is_and_its_last_match_are_the_logs(
    ladder: tuple[Path, str], name: str, value: object
) -> None:
    snap, _ = ladder
    info = board(snap)
    row = next(r for r in info.board if r.player != value)
    setattr(row, name, value)
    found(snap, info, f"{row.player}: the board says")


def test_a_mean_and_an_interval_cannot_be_hidden_by_their_flags(ladder: tuple[Path, str]) -> None:
    snap, _ = ladder
    info = board(snap)
    row = next(r for r in info.board if r.mean != 0.0)
    row.has_mean = row.has_interval = False
    found(snap, info, f"{row.player}: the board says")


def test_a_row_cannot_stand_in_for_anothers(ladder: tuple[Path, str]) -> None:
    snap, _ = ladder
    info = board(snap)
    info.board.append(info.board[0])
    found(snap, info, "the board lists")


def test_the_game_decides_which_way_it_is_won(ladder: tuple[Path, str]) -> None:
    """Flipped, and the board refolded with the library's own rules from the real logs."""
    snap, address = ladder
    taken = snapshot_of(json.loads(snap.read_text()))
    info = lpb.LadderInfo()
    info.CopyFrom(taken.snapshot.ladder)

    async def get() -> dict[str, Any]:
        async with ArenaClient(address) as client:
            return dict(await fetch_logs(client, [m.match_id for m in taken.matches]))

    logs = run(get(), seconds=60)
    played: list[Played | None] = []
    for line in taken.matches:
        log = logs[line.match_id]
        if line.cancelled:
            played.append(None)
            continue
        seats = sorted(log.match.seats, key=lambda s: s.seat)
        played.append(
            Played(
                kinds=fault_kinds(log, len(seats)), index=line.index, group=line.group,
                entrants=tuple(s.name for s in seats),
                totals=tuple(codec.score_from_pb(t) for t in log.match.totals),
                winners=tuple(log.match.winners), faults=tuple(s.faults for s in seats),
                forfeited=tuple(s.forfeited for s in seats),
            )
        )  # fmt: skip
    info.lowest_wins = not info.lowest_wins
    folded = fold(played, lowest_wins=info.lowest_wins, group_size=info.players)
    before = [r.player for r in info.board]
    del info.board[:]
    for row in folded.ranked():
        out = lpb.LadderRow(
            player=row.player, entrant=row.player, matches=row.matches, groups=row.groups,
            wins=row.wins, faults=row.faults, forfeits=row.forfeits,
            last_match=max(row.last_index, 0),
        )  # fmt: skip
        rating = folded.rating(row.player)
        assert rating is not None
        out.mu, out.sigma, out.ordinal = rating.mu, rating.sigma, rating.ordinal
        if row.mean is not None:
            out.mean, out.has_mean = row.mean, True
        if row.interval is not None:
            out.ci_low, out.ci_high, out.has_interval = *row.interval, True
        info.board.append(out)
    assert [r.player for r in info.board] != before
    found(snap, info, "triathlon is won by the highest")
