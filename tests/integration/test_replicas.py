"""Three server replicas on one PostgreSQL store: a tournament whose calls are spread over all
of them, one replica killed with SIGKILL in the middle, and still every match finishes,
nothing acknowledged is lost, and every log audits clean."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import grpc
import pytest

from cardarena.clients.audit import audit_response
from cardarena.clients.bots import SeatState
from cardarena.clients.client import ArenaClient, Decide, Ticket, seatplay
from cardarena.clients.tournament import TournamentConfig, parse_bot, run_tournament
from cardarena.engine import PASS
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from tests.stores import postgres_schema

from ..calls import auth
from ..serverproc import ServerProcess
from ..waiting import eventually

pytestmark = pytest.mark.integration

LEASE = "1"


@contextlib.contextmanager
def running_replicas(
    tmp_path: Path, count: int, lease: str = LEASE
) -> Iterator[tuple[str, list[ServerProcess]]]:
    """``count`` replicas started on a scratch PostgreSQL schema (its URL and the processes);
    on leaving, every process the list then holds is killed (a test may restart one in it)."""
    with postgres_schema() as url:
        servers = [
            ServerProcess(
                tmp_path / f"replica{i}", extra=["--store", url, "--lease-seconds", lease]
            )
            for i in range(count)
        ]
        for server in servers:
            server.start()
        try:
            yield url, servers
        finally:
            for server in servers:
                server.kill()


@pytest.fixture
def acknowledged(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The highest seq the server acknowledged, per match: to ``ArenaClient.submit``, or in an
    OK ``ActionResult`` on a Play call (``ArenaClient.play(via="play")``, as tournaments play)."""
    acked: dict[str, int] = defaultdict(int)
    real_submit = ArenaClient.submit
    real_play_action, real_judged = seatplay.play_action, seatplay.judged
    match_of: dict[str, str] = {}

    async def recording_submit(
        self: ArenaClient, ticket: Ticket, action: int, expected_seq: int
    ) -> spb.SubmitActionResponse:
        response = await real_submit(self, ticket, action, expected_seq)
        acked[ticket.match_id] = max(acked[ticket.match_id], response.last_seq)
        return response

    async def recording_play_action(
        decide: Decide, state: SeatState, seq: int, legal: list[pb.Action], judge: bool
    ) -> spb.PlayAction | None:
        act = await real_play_action(decide, state, seq, legal, judge)
        if act is not None:
            match_of[act.request_id] = state.match_id
        return act

    def recording_judged(
        result: spb.ActionResult, sent: dict[int, spb.PlayAction], judge: bool
    ) -> None:
        match_id = match_of.get(result.request_id)
        if result.code == 0 and match_id is not None:
            acked[match_id] = max(acked[match_id], result.last_seq)
        real_judged(result, sent, judge)

    monkeypatch.setattr(ArenaClient, "submit", recording_submit)
    monkeypatch.setattr(seatplay, "play_action", recording_play_action)
    monkeypatch.setattr(seatplay, "judged", recording_judged)
    return acked


async def to_act(client: ArenaClient, tickets: list[Ticket]) -> tuple[Ticket, pb.Action]:
    """The seat to act (from the seats' own snapshots, through ``client``) and a legal action."""
    for ticket in tickets:
        opening = await client.stub.StreamEvents(
            spb.StreamEventsRequest(match_id=ticket.match_id, seat=ticket.seat, after_seq=1 << 62),
            metadata=auth(ticket.token),
            timeout=10,
        ).read()
        assert isinstance(opening, spb.StreamEventsResponse)
        if opening.snapshot.legal_actions:
            return ticket, opening.snapshot.legal_actions[0]
    raise AssertionError("nobody is to act")


def test_a_tournament_survives_a_replica_killed_mid_way(
    tmp_path: Path, acknowledged: dict[str, int]
) -> None:
    with running_replicas(tmp_path, 3) as (_, servers):
        victim, survivors = servers[1], [servers[0], servers[2]]
        config = TournamentConfig(
            address=",".join(s.address for s in servers),
            game="pentathlon",
            bots=[parse_bot("random"), parse_bot("rules"), parse_bot("random:7")],
            players=3,
            options={"rounds": ["pass", "queens", "fan_tan"]},
            deals=4,
            concurrency=6,
        )

        async def main() -> list[tuple[str, bytes]]:
            tournament = asyncio.create_task(run_tournament(config))

            def well_into_it() -> bool:
                if sum(acknowledged.values()) >= 600:
                    return True
                assert not tournament.done(), "the tournament ended before the kill"
                return False

            await eventually(well_into_it, within=120, what="600 acknowledged events")
            victim.kill()
            result = await asyncio.wait_for(tournament, 240)
            failed = [m.error for m in result.matches if m.error is not None]
            assert not failed, failed
            return [(m.match_id, m.last_hash) for m in result.matches]

        played = asyncio.run(main())
        assert len(played) == 3 * 4  # 1 lineup x 3 rotations x 4 deals

        async def audit_all() -> None:
            async with ArenaClient(",".join(s.address for s in survivors)) as client:
                for match_id, last_hash in played:
                    log = await client.match_log(match_id)
                    assert log.match.status == spb.MATCH_STATUS_ENDED
                    assert log.entries[-1].seq >= acknowledged[match_id], "lost an ack"
                    assert audit_response(log, match_id, head=last_hash) is None

        asyncio.run(audit_all())
    owners = "".join(s.stderr_path.read_text() for s in survivors)
    assert '"lease_taken"' in owners, "no survivor took over the killed replica's matches"
    assert "Traceback" not in owners


def test_actions_reaching_a_non_owner_are_forwarded_and_streams_follow(tmp_path: Path) -> None:
    """One replica owns the match; a seat acting and streaming through the other one sees
    the same match, its refusals keep their codes, and a stream there wakes on each event."""
    with running_replicas(tmp_path, 2) as (_, servers):

        async def main() -> None:
            async with (
                ArenaClient(servers[0].address) as owner,
                ArenaClient(servers[1].address) as other,
            ):
                info = await owner.create_match("triathlon", players=3, seed=bytes(32))
                tickets = [await other.join(info.match_id) for _ in range(3)]
                assert [t.seat for t in tickets] == [0, 1, 2]
                # A retried join (same token) through the other replica: the same seat.
                again = await owner.stub.JoinMatch(
                    spb.JoinMatchRequest(match_id=info.match_id, token=tickets[1].token),
                    timeout=10,
                )
                assert (again.seat, again.token) == (1, tickets[1].token)
                watch = other.stub.WatchMatch(
                    spb.WatchMatchRequest(match_id=info.match_id, after_seq=1 << 62),
                    timeout=30,
                )
                await anext(aiter(watch))  # its snapshot
                current = await other.get_match(info.match_id)
                ticket, choice = await to_act(other, tickets)
                seat = ticket.seat

                def through_other(
                    action: pb.Action, expected_seq: int, request_id: str = ""
                ) -> Awaitable[spb.SubmitActionResponse]:
                    return other.stub.SubmitAction(
                        spb.SubmitActionRequest(
                            match_id=info.match_id,
                            seat=seat,
                            action=action,
                            expected_seq=expected_seq,
                            request_id=request_id,
                        ),
                        metadata=auth(ticket.token),
                        timeout=10,
                    )

                # Refusals come back through the forwarder with the owner's codes.
                with pytest.raises(grpc.aio.AioRpcError) as wrong:
                    await through_other(codec.action_to_pb(PASS), current.last_seq + 5)
                assert wrong.value.code() == grpc.StatusCode.ABORTED
                assert "stale" in (wrong.value.details() or "")
                # A legal action through the non-owner: applied once, streamed there.
                done = await through_other(choice, current.last_seq, "forwarded-1")
                assert done.first_seq == current.last_seq + 1
                woke = await asyncio.wait_for(anext(aiter(watch)), 10)
                assert woke.event.seq == done.first_seq
                repeat = await through_other(choice, current.last_seq, "forwarded-1")
                assert (repeat.first_seq, repeat.last_seq) == (done.first_seq, done.last_seq)
                assert (await owner.get_match(info.match_id)).last_seq == done.last_seq
                watch.cancel()

        asyncio.run(asyncio.wait_for(main(), 60))
    forwarder = servers[1].stderr_path.read_text()
    assert "Traceback" not in forwarder


def test_a_draining_replica_hands_its_matches_over_at_once(tmp_path: Path) -> None:
    """With 30-second leases, a match whose owner drains (SIGTERM) is writable through another
    replica right away: the owner gave its lease back instead of letting it run out."""
    with running_replicas(tmp_path, 2, lease="30") as (_, servers):

        async def main() -> None:
            async with (
                ArenaClient(servers[0].address) as owner,
                ArenaClient(servers[1].address, retry_for=2.0) as other,
            ):
                info = await owner.create_match("triathlon", players=3)
                tickets = [await other.join(info.match_id) for _ in range(3)]
                assert servers[0].terminate() == 0
                current = await other.get_match(info.match_id)
                ticket, choice = await to_act(other, tickets)
                done = await other.submit(ticket, codec.action_from_pb(choice), current.last_seq)
                assert done.first_seq == current.last_seq + 1

        asyncio.run(asyncio.wait_for(main(), 20))
    assert '"lease_taken"' in servers[1].stderr_path.read_text()


def test_clocks_move_to_the_replica_that_takes_over(tmp_path: Path) -> None:
    """Nobody plays: the clock plays every move. The owner is killed after a few of them and
    the match still runs to its end, timed out move by move by the replica that took over."""
    with running_replicas(tmp_path, 2) as (_, servers):

        async def main() -> None:
            async with (
                ArenaClient(servers[0].address) as owner,
                ArenaClient(servers[1].address) as other,
            ):
                info = await owner.create_match("triathlon", players=3, move_ms=20)
                for _ in range(3):
                    await owner.join(info.match_id)

                async def timed_out_a_few() -> bool:
                    return (await other.get_match(info.match_id)).last_seq >= (info.last_seq + 15)

                async def ended() -> spb.MatchInfo | None:
                    final = await other.get_match(info.match_id)
                    return final if final.status == spb.MATCH_STATUS_ENDED else None

                await eventually(timed_out_a_few, within=60, what="15 moves by the clock")
                servers[0].kill()
                killed_at = (await other.get_match(info.match_id)).last_seq
                final = await eventually(ended, within=60, what="the taker's clock to end it")
                log = await other.match_log(info.match_id)
                assert audit_response(log, info.match_id, head=final.last_hash) is None
                timeouts = [
                    e.seq
                    for e in log.entries
                    if pb.Event.FromString(e.event).WhichOneof("kind") == "timed_out"
                ]
                # Played by the clock before the kill and, on the taker's clock, after it.
                assert min(timeouts) <= killed_at < max(timeouts)

        asyncio.run(asyncio.wait_for(main(), 90))
    assert '"lease_taken"' in servers[1].stderr_path.read_text()


def test_chaos_replicas_killed_and_restarted_again_and_again(
    tmp_path: Path, acknowledged: dict[str, int]
) -> None:
    """Bounded chaos on loopback: every 400 acknowledged moves (about eight times in the
    tournament) a random replica is SIGKILLed and started again on its address, all through a
    tournament with move clocks on. Every match finishes without error, nothing acknowledged is
    lost, every log audits. Kills follow progress, not the wall clock, so a fast machine that
    finishes the tournament in seconds still sees them."""
    with running_replicas(tmp_path, 3) as (url, servers):
        addresses = [s.address for s in servers]
        kills = 0
        config = TournamentConfig(
            address=",".join(addresses),
            game="hexathlon",
            bots=[parse_bot(b) for b in ("random", "rules", "random:7", "rules:3")],
            players=4,
            deals=2,
            concurrency=8,
            move_ms=2000,
        )

        async def main() -> list[tuple[str, bytes]]:
            nonlocal kills
            rng = random.Random(7)
            tournament = asyncio.create_task(run_tournament(config))

            def acked(moves: int) -> Callable[[], bool]:
                """Whether ``moves`` moves are acknowledged (or the tournament is over)."""
                return lambda: tournament.done() or sum(acknowledged.values()) >= moves

            next_kill = 300
            while True:
                await eventually(acked(next_kill), within=240, what=f"{next_kill} moves")
                if tournament.done():
                    break
                next_kill = sum(acknowledged.values()) + 400
                victim = rng.randrange(len(servers))
                servers[victim].kill()
                kills += 1
                # The others carry the tournament on while the victim is down: more events
                # acknowledged than the eight matches' moves in flight when it died could
                # account for (a move writes a few).
                down_at = sum(acknowledged.values())
                await eventually(acked(down_at + 60), within=60, what="moves with one down")
                servers[victim] = ServerProcess(
                    tmp_path / f"replica{victim}",
                    listen=addresses[victim],
                    extra=["--store", url, "--lease-seconds", LEASE],
                ).start()
            result = await tournament
            failed = [m.error for m in result.matches if m.error is not None]
            assert not failed, failed
            async with ArenaClient(",".join(addresses)) as client:
                for match in result.matches:
                    log = await client.match_log(match.match_id)
                    assert log.entries[-1].seq >= acknowledged[match.match_id]
                    assert audit_response(log, match.match_id, head=match.last_hash) is None
            return [(m.match_id, m.last_hash) for m in result.matches]

        played = asyncio.run(asyncio.wait_for(main(), 240))
    assert len(played) == 4 * 2 and kills >= 3


def test_a_hosted_tournament_is_followed_by_the_replica_that_does_not_direct_it(
    tmp_path: Path,
) -> None:
    """Two replicas: the one that creates a tournament directs it; entrants connect to the
    other, are told their seats there and play through it (forwarded to the owners); it
    shows the standings as they come, refuses to cancel (naming the director) and ends its
    entrants' streams when the tournament ends."""
    from cardarena.v1 import tournament_pb2 as tpb
    from tests.integration.hosted import RANDOMS, create, play_all

    with running_replicas(tmp_path, 2) as (_, (director, follower)):

        async def main() -> tpb.TournamentInfo:
            async with (
                ArenaClient(director.address) as first,
                ArenaClient(follower.address) as second,
            ):
                created = await create(first, RANDOMS, deals=2, move_ms=10_000, concurrency=3)
                tid = created.tournament.tournament_id
                with pytest.raises(grpc.aio.AioRpcError) as elsewhere:
                    await second.tournaments.cancel(tid, reason="not here", secret="s" * 40)
                assert elsewhere.value.code() in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.PERMISSION_DENIED,
                )
                reports = await asyncio.wait_for(play_all(second, created, RANDOMS), 120)
                assert all(r.final is not None and r.matches == 6 for r in reports)
                seen = await second.tournaments.get(tid)
                assert seen.status == tpb.TOURNAMENT_STATUS_ENDED and seen.finished == 6
                return await first.tournaments.get(tid, matches=True)

        final = asyncio.run(main())
        assert final.finished == final.planned == 6 and final.failed == 0


def test_a_hosted_tournament_carries_on_when_its_directing_replica_dies(
    tmp_path: Path,
) -> None:
    """The directing replica is killed (SIGKILL) in the middle: once its lease runs out the
    other replica takes the scheduling over, and the tournament ends with exactly its planned
    matches, every log auditing clean."""
    from cardarena.clients.audit.tournament import audit_tournament
    from cardarena.v1 import tournament_pb2 as tpb
    from tests.integration.hosted import RANDOMS, create, entrants

    with running_replicas(tmp_path, 2) as (_, (first, second)):

        async def main() -> tpb.TournamentInfo:
            async with (
                ArenaClient(first.address) as creator,
                ArenaClient(second.address, retry_for=60) as client,
            ):
                created = await create(creator, RANDOMS, deals=4, move_ms=10_000, concurrency=2)
                tid = created.tournament.tournament_id
                playing = [
                    asyncio.create_task(entrant) for entrant in entrants(client, created, RANDOMS)
                ]

                async def under_way() -> bool:
                    return (await client.tournaments.get(tid)).finished >= 2

                await eventually(under_way, within=60, what="two matches played")
                first.kill()
                await asyncio.wait_for(asyncio.gather(*playing), 120)
                final = await client.tournaments.get(tid, matches=True)
                audited = await audit_tournament(client, tid)
                assert audited.ok, audited.findings
                return final

        final = asyncio.run(main())
        assert final.status == tpb.TOURNAMENT_STATUS_ENDED
        assert final.finished == final.planned == 12 and final.failed == 0
