"""House bots against a real server (``serve --house-bots``): a match against them plays to its
end with nobody connected and audits clean; what CreateMatch refuses and why; a worker killed
mid-match is restarted and the match goes on; a server killed mid-match resumes its house
seats; a match nobody attends is cancelled after ``--house-idle``, one whose player keeps a
stream open is not."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from google.protobuf import struct_pb2

from cardarena.clients.audit import audit_log
from cardarena.server.house import MAX_MC_BUDGET_MS
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT, auth, run, seat_feed, seat_player, stub
from ..serverproc import ServerProcess, log_records
from ..waiting import eventually, wait_until

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration

CREATOR = "creator-" * 5
"""Every match here is created with it, so the test may cancel it."""
LONG = 120.0
"""How long a whole match may take on a busy machine (never a measure: a bound)."""


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server offering two house seats at once, for the refusals."""
    data = tmp_path_factory.mktemp("house") / "data"
    with ServerProcess(data, extra=["--house-bots", "2"]) as running:
        yield running


def request(
    game: str = "triathlon",
    players: int = 3,
    seats: dict[int, str] | None = None,
    *,
    move_ms: int = 0,
    **options: Any,
) -> spb.CreateMatchRequest:
    struct = struct_pb2.Struct()
    struct.update(options or ({"max_deals": 1} if game == "triathlon" else {}))
    chosen = {1: "rules", 2: "random"} if seats is None else seats
    return spb.CreateMatchRequest(
        game=game,
        players=players,
        options=struct,
        time_control=spb.TimeControl(move_ms=move_ms),
        house_seats=[spb.HouseSeat(seat=s, bot=b) for s, b in chosen.items()],
        creator_secret=CREATOR,
    )


async def refusal(api: MatchServiceAsyncStub, asked: spb.CreateMatchRequest) -> tuple[Any, str]:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await api.CreateMatch(asked, timeout=RPC_TIMEOUT)
    return refused.value.code(), refused.value.details() or ""


async def ended(api: MatchServiceAsyncStub, match_id: str, within: float = LONG) -> spb.MatchInfo:
    async def look() -> spb.MatchInfo | None:
        info = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id))).match
        return info if info.status == spb.MATCH_STATUS_ENDED else None

    return await eventually(look, within=within, every=0.1, what=f"match {match_id} to end")


async def audited(api: MatchServiceAsyncStub, match_id: str) -> list[pb.Event]:
    log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=RPC_TIMEOUT)
    report = audit_log(log)
    assert report.ok, report
    return [pb.Event.FromString(entry.event) for entry in log.entries]


def own_actions(events: list[pb.Event], seat: int) -> int:
    """The actions ``seat`` played itself (not the clock's after a TimedOut)."""
    count, timed_out = 0, False
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "timed_out":
            timed_out = event.timed_out.seat == seat
            continue
        if kind in ("card_played", "passed", "suit_excluded", "trump_chosen"):
            if getattr(event, kind).seat == seat and not timed_out:
                count += 1
            timed_out = False
    return count


async def cancel(api: MatchServiceAsyncStub, match_id: str) -> None:
    request = spb.CancelMatchRequest(match_id=match_id, reason="the test is done with it")
    await api.CancelMatch(request, metadata=auth(CREATOR), timeout=RPC_TIMEOUT)


async def join(api: MatchServiceAsyncStub, match_id: str, seat: int = 0) -> str:
    joined = await api.JoinMatch(
        spb.JoinMatchRequest(match_id=match_id, seat=seat, name="player"), timeout=RPC_TIMEOUT
    )
    return joined.token


def running(pid: int) -> bool:
    """Whether a process of that id lives (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def worker_pids(server: ServerProcess) -> list[int]:
    started = [r for r in log_records(server.stderr_path) if r["event"] == "house_worker_started"]
    return [int(r["pid"]) for r in started]


def test_a_match_against_house_bots_plays_to_its_end_with_nobody_connected(
    tmp_path: Path,
) -> None:
    """The player joins and leaves: its seat is played by the clock, the house seats by
    their bots, every action through the usual path; the log is an ordinary one."""

    async def scenario(api: MatchServiceAsyncStub) -> None:
        offer = (await api.ListGames(spb.ListGamesRequest())).house_bots
        assert list(offer.bots) == ["random", "rules", "mc"] and offer.max_seats == 3
        asked = request(seats={1: "rules", 2: "mc"}, move_ms=300)
        created = (await api.CreateMatch(asked, timeout=RPC_TIMEOUT)).match
        names = [seat.name for seat in created.seats]
        assert names == ["", "rules (house)", "mc 50ms (house)"]
        await join(api, created.match_id)
        info = await ended(api, created.match_id)
        assert not info.cancelled and list(info.winners)
        assert [seat.faults for seat in info.seats][1:] == [0, 0]
        events = await audited(api, created.match_id)
        assert own_actions(events, 1) > 0 and own_actions(events, 2) > 0
        assert own_actions(events, 0) == 0  # nobody played it: its clock did

    with ServerProcess(tmp_path / "data", extra=["--house-bots", "3"]) as server:
        run(_framed(server.address, scenario), LONG + 30)


async def _framed(address: str, scenario: Any) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        await scenario(stub(channel))


def test_house_seats_are_refused_by_a_server_that_offers_none(server: ServerProcess) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        assert not (await api.ListGames(spb.ListGamesRequest())).HasField("house_bots")
        code, details = await refusal(api, request())
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "--house-bots" in details

    run(_framed(server.address, scenario))


@pytest.mark.parametrize(
    ("asked", "named"),
    [
        (request(seats={3: "rules"}), "house_seats[0].seat: seat 3 does not exist"),
        (request(seats={1: "alphago"}), "house_seats[0].bot: one of random, rules, mc"),
        (request(seats={0: "rules", 1: "random", 2: "mc"}), "leave at least one seat"),
        (
            spb.CreateMatchRequest(
                game="triathlon",
                house_seats=[spb.HouseSeat(seat=1, bot="rules"), spb.HouseSeat(seat=1)],
            ),
            "house_seats[1].seat: seat 1 is a house seat twice",
        ),
        (
            spb.CreateMatchRequest(
                game="triathlon",
                house_seats=[spb.HouseSeat(seat=1, bot="mc", budget_ms=MAX_MC_BUDGET_MS + 1)],
            ),
            f"house_seats[0].budget_ms: 1..{MAX_MC_BUDGET_MS} milliseconds",
        ),
        (
            spb.CreateMatchRequest(
                game="triathlon", house_seats=[spb.HouseSeat(seat=1, bot="rules", budget_ms=5)]
            ),
            "house_seats[0].budget_ms: only an mc seat",
        ),
        (
            spb.CreateMatchRequest(
                game="triathlon",
                time_control=spb.TimeControl(move_ms=60),
                house_seats=[spb.HouseSeat(seat=1, bot="mc")],
            ),
            "more than half the move clock",
        ),
        (
            spb.CreateMatchRequest(
                game="triathlon",
                reserved_seats=[spb.SeatReservation(seat=1, join_secret="s" * 32)],
                house_seats=[spb.HouseSeat(seat=1, bot="rules")],
            ),
            "house_seats[0].seat: seat 1 is reserved",
        ),
        (
            spb.CreateMatchRequest(
                game="triathlon", seed=bytes(32), house_seats=[spb.HouseSeat(seat=1, bot="rules")]
            ),
            "not with a chosen seed",
        ),
    ],
    ids=[
        "seat",
        "bot",
        "every-seat",
        "twice",
        "budget",
        "budget-not-mc",
        "clock",
        "reserved",
        "seed",
    ],
)
def test_a_bad_house_seat_is_refused_naming_its_field(
    house: ServerProcess, asked: spb.CreateMatchRequest, named: str
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        code, details = await refusal(api, asked)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert named in details

    run(_framed(house.address, scenario))


def test_beyond_the_servers_bound_creating_is_resource_exhausted_until_one_ends(
    house: ServerProcess,
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        first = (await api.CreateMatch(request(), timeout=RPC_TIMEOUT)).match  # both seats
        code, details = await refusal(api, request(seats={1: "random"}))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "at most 2 house seats" in details
        await cancel(api, first.match_id)
        second = (await api.CreateMatch(request(seats={1: "random"}), timeout=RPC_TIMEOUT)).match
        assert second.seats[1].name == "random (house)"
        await cancel(api, second.match_id)

    run(_framed(house.address, scenario))


def test_a_retried_create_finds_its_house_seats_taken_by_itself(house: ServerProcess) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        asked = request(seats={2: "rules"})
        asked.request_id = "house-retry-1"
        first = (await api.CreateMatch(asked, timeout=RPC_TIMEOUT)).match
        again = (await api.CreateMatch(asked, timeout=RPC_TIMEOUT)).match
        assert again.match_id == first.match_id
        assert [s.name for s in again.seats] == ["", "", "rules (house)"]
        await cancel(api, first.match_id)

    run(_framed(house.address, scenario))


def test_a_worker_killed_mid_match_is_restarted_and_the_match_goes_on(tmp_path: Path) -> None:
    """With no clock, only the player's own moves and the house bots' move the match: its end
    proves the restarted worker took the house seats up again."""
    with ServerProcess(tmp_path / "data", extra=["--house-bots", "2"]) as server:
        (pid,) = worker_pids(server)

        async def scenario(api: MatchServiceAsyncStub) -> None:
            asked = request("hexathlon", 3, {1: "rules", 2: "random"}, rounds=["pass", "clubs"])
            created = (await api.CreateMatch(asked, timeout=RPC_TIMEOUT)).match
            token = await join(api, created.match_id)
            feed = seat_feed(api, created.match_id, 0, token)
            await feed.snapshot()
            os.kill(pid, signal.SIGKILL)
            feed.cancel()
            await seat_player(api, created.match_id, 0, token, after_seq=0, timeout=LONG)
            info = await ended(api, created.match_id)
            assert not info.cancelled
            events = await audited(api, created.match_id)
            assert own_actions(events, 1) > 0 and own_actions(events, 2) > 0

        run(_framed(server.address, scenario), LONG + 30)
        died = [r for r in log_records(server.stderr_path) if r["event"] == "house_worker_died"]
        assert died and died[0]["pid"] == pid
        assert len(worker_pids(server)) == 2


def test_a_server_killed_mid_match_resumes_its_house_seats(tmp_path: Path) -> None:
    data = tmp_path / "data"
    flags = ["--house-bots", "2"]
    with ServerProcess(data, extra=flags) as server:

        async def begin(api: MatchServiceAsyncStub) -> tuple[str, str]:
            asked = request("hexathlon", 3, {1: "random", 2: "rules"}, rounds=["pass", "clubs"])
            created = (await api.CreateMatch(asked, timeout=RPC_TIMEOUT)).match
            return created.match_id, await join(api, created.match_id)

        match_id, token = run(_begin(server.address, begin))
        orphans = worker_pids(server)
        server.kill()
    wait_until(lambda: not any(running(pid) for pid in orphans), what="its workers to exit too")
    with ServerProcess(data, extra=flags) as again:
        resumed = [r for r in log_records(again.stderr_path) if r["event"] == "house_seats_resumed"]
        assert resumed and resumed[-1]["seats"] == 2

        async def finish(api: MatchServiceAsyncStub) -> None:
            await seat_player(api, match_id, 0, token, after_seq=0, timeout=LONG)
            info = await ended(api, match_id)
            assert not info.cancelled
            events = await audited(api, match_id)
            assert own_actions(events, 1) > 0 and own_actions(events, 2) > 0

        run(_framed(again.address, finish), LONG + 30)


async def _begin(address: str, scenario: Any) -> Any:
    async with grpc.aio.insecure_channel(address) as channel:
        return await scenario(stub(channel))


def test_a_match_nobody_attends_is_cancelled_and_one_attended_is_not(tmp_path: Path) -> None:
    """Both matches have house seats playing on streams of their own: only a player's stream
    counts. The attended one is created first, so it has waited at least as long when the
    other is cancelled."""
    with ServerProcess(
        tmp_path / "data", extra=["--house-bots", "4", "--house-idle", "2"]
    ) as server:

        async def scenario(api: MatchServiceAsyncStub) -> None:
            kept = (await api.CreateMatch(request(), timeout=RPC_TIMEOUT)).match
            feed = seat_feed(api, kept.match_id, 0, await join(api, kept.match_id))
            await feed.snapshot()
            left = (await api.CreateMatch(request(), timeout=RPC_TIMEOUT)).match
            await join(api, left.match_id)
            info = await ended(api, left.match_id, within=30)
            assert info.cancelled
            events = await audited(api, left.match_id)
            cancelled = [e.match_cancelled for e in events if e.HasField("match_cancelled")]
            assert "no player attended for 2 s" in cancelled[0].reason
            now = (await api.GetMatch(spb.GetMatchRequest(match_id=kept.match_id))).match
            assert now.status == spb.MATCH_STATUS_RUNNING
            feed.cancel()
            assert (await ended(api, kept.match_id, within=30)).cancelled

        run(_framed(server.address, scenario), 90)

        def unattended() -> list[dict[str, Any]] | None:
            """The log lines, once both are written: each follows its match's cancel, which a
            client may see ended first."""
            records = log_records(server.stderr_path)
            found = [r for r in records if r["event"] == "house_match_unattended"]
            return found if len(found) >= 2 else None

        assert len(wait_until(unattended, what="two house_match_unattended lines")) == 2


def test_a_drained_server_stops_its_workers(tmp_path: Path) -> None:
    with ServerProcess(
        tmp_path / "data", extra=["--house-bots", "2", "--house-workers", "2"]
    ) as server:
        pids = worker_pids(server)
        assert len(pids) == 2
        assert server.terminate() == 0

        wait_until(lambda: not any(running(pid) for pid in pids), what="the workers to exit")
