"""A hostile client against the read gate (``server.api.reads``): it cannot make a player wait
there, hold the gate past its call, leave state behind, pass as exempt, or jump the queue.

Each scenario holds the gate or a read in its handler on purpose, then ends it the ways a
client can (deadline, cancel, a refusal after admission, a response it will not take) and
checks that the gate is whole again: not running, nothing waiting, the next read served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardarena.engine import GAMES
from cardarena.engine.schedule import GameSpec
from cardarena.server.api import service as service_module
from cardarena.server.api.access import Access
from cardarena.server.api.limits import FORWARDED_FOR, WEB_CLIENT
from cardarena.server.api.peers import FORWARDED_BY, PEER_SECRET, Peers
from cardarena.server.api.reads import ReadGate, ReadLimits
from cardarena.server.app import Server
from cardarena.server.errors import Throttled
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import ladder_pb2_grpc, tournament_pb2_grpc
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import auth, run
from ..waiting import eventually
from .support import (
    QUICK,
    address_of,
    channel_to,
    create_table,
    failure,
    gate_held,
    play_hosted_to_end,
    play_out_over_play,
    secret,
    served,
    whole,
)

OPERATOR = secret()


async def served_promptly(server: Server) -> None:
    """An anonymous read is served at once (the gate is whole again)."""
    async with channel_to(address_of(server)) as (_, api):
        await api.ListMatches(spb.ListMatchesRequest(page_size=1), timeout=QUICK)


class Stuck:
    """``server.arena.list_records`` held until released: a ListMatches whose handler awaits
    something slow (a store far away, a huge page) while it holds the gate."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.original = server.arena.list_records
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.sizes: list[int] = []

    async def list_records(self, **kwargs: Any) -> Any:
        self.sizes.append(kwargs["page_size"])
        self.entered.set()
        await self.release.wait()
        return await self.original(**kwargs)

    def __enter__(self) -> Stuck:
        self.server.arena.list_records = self.list_records  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.arena.list_records = self.original  # type: ignore[method-assign]
        self.release.set()


def test_players_never_wait_at_a_gate_held_for_ever(data_dir: Path) -> None:
    """The gate held the whole time and anonymous reads queued behind it: a match is still
    played to its end over SubmitAction and another over Play; the reads are refused."""

    async def scenario() -> None:
        async with (
            served(data_dir, access=Access(operator_token=OPERATOR)) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            first = await create_table(api, metadata=auth(OPERATOR))
            second = await create_table(api, metadata=auth(OPERATOR))
            async with gate_held(server) as gate:
                reads = [
                    asyncio.ensure_future(
                        failure(api.GetMatch(spb.GetMatchRequest(match_id=first.match_id)))
                    )
                    for _ in range(8)
                ]
                await eventually(lambda: gate.waiting == 8 or None, what="8 reads queued")
                assert await play_hosted_to_end(server, api, first) > 0
                await asyncio.wait_for(play_out_over_play(address_of(server), second), 20)
                assert server.arena.matches[second.match_id].ended
                codes = {error.code() for error in await asyncio.gather(*reads)}
                assert codes == {grpc.StatusCode.RESOURCE_EXHAUSTED}  # waited 2 s, refused
            await whole(gate)
            await served_promptly(server)

    run(scenario(), 60)


@pytest.mark.parametrize("ending", ["deadline", "cancel", "refuse the answer"])
def test_a_read_stuck_in_its_handler_lets_the_gate_go_when_its_call_ends(
    data_dir: Path, ending: str
) -> None:
    """A read whose handler awaits for ever holds the gate only while its call lives: past
    its deadline, cancelled by its client, or its answer refused, the gate is whole again,
    and the read queued behind it is served."""

    async def scenario() -> None:
        async with (
            served(data_dir, access=Access(read_share=1.0)) as server,
            channel_to(address_of(server)) as (_, api),
            channel_to(address_of(server), [("grpc.max_receive_message_length", 1)]) as (_, tiny),
        ):
            gate = server.service.guard.reads
            await create_table(api, seat_all=False)  # an answer of more than a byte
            with Stuck(server) as stuck:
                timeout = 0.5 if ending == "deadline" else QUICK
                caller = tiny if ending == "refuse the answer" else api
                call = caller.ListMatches(spb.ListMatchesRequest(page_size=7), timeout=timeout)
                await asyncio.wait_for(stuck.entered.wait(), QUICK)
                behind = asyncio.ensure_future(
                    api.ListMatches(spb.ListMatchesRequest(page_size=8), timeout=QUICK)
                )
                await eventually(lambda: gate.waiting == 1 or None, what="a read queued")
                if ending == "cancel":
                    call.cancel()
                    assert await call.code() == grpc.StatusCode.CANCELLED
                elif ending == "deadline":
                    assert await call.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                else:  # the handler finishes, and the client will not take its answer
                    stuck.release.set()
                    assert await call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                stuck.release.set()
                await asyncio.wait_for(behind, QUICK)
                assert stuck.sizes == [7, 8]
            await whole(gate)
            await served_promptly(server)

    run(scenario(), 30)


def test_a_storm_of_cancelled_and_expired_reads_leaves_nothing_behind(data_dir: Path) -> None:
    """Reads queued behind a held gate, then cancelled by their client or past their
    deadline, give their places back: the queue is empty, and once the gate is let go the
    next read is served at once."""

    async def scenario() -> None:
        async with (
            served(data_dir) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            async with gate_held(server) as gate:
                for round_ in range(3):
                    calls = [
                        api.ListMatches(spb.ListMatchesRequest(page_size=1), timeout=QUICK)
                        for _ in range(32)
                    ]
                    await eventually(lambda: gate.waiting == 32 or None, what="32 queued")
                    for call in calls:
                        call.cancel()
                    await whole_queue(gate)
                    expiring = [
                        api.ListMatches(spb.ListMatchesRequest(page_size=1), timeout=0.3)
                        for _ in range(32)
                    ]
                    codes = {await call.code() for call in expiring}
                    assert codes == {grpc.StatusCode.DEADLINE_EXCEEDED}, round_
                    await whole_queue(gate)
                assert gate._running  # still the holder's, and nobody else's
            await whole(gate)
            await served_promptly(server)

    run(scenario(), 60)


async def whole_queue(gate: ReadGate) -> None:
    await eventually(
        lambda: (gate.waiting == 0 and not gate._queues) or None, what="the queue to empty"
    )


def test_reads_refused_after_their_turn_began_let_the_gate_go(data_dir: Path) -> None:
    """A read admitted at the gate, then refused by its own checks (or failing inside),
    gives the gate back: each kind, one after another, is answered at once."""

    async def scenario() -> None:
        async with (
            served(data_dir) as server,
            channel_to(address_of(server)) as (channel, api),
        ):
            running = await create_table(api)
            tournaments = tournament_pb2_grpc.TournamentServiceStub(channel)
            ladders = ladder_pb2_grpc.LadderServiceStub(channel)
            gate = server.service.guard.reads
            refused: list[tuple[Callable[[], Any], grpc.StatusCode]] = [
                (
                    lambda: api.GetMatchLog(spb.GetMatchLogRequest(match_id=running.match_id)),
                    grpc.StatusCode.FAILED_PRECONDITION,
                ),
                (
                    lambda: api.GetMatch(spb.GetMatchRequest(match_id="0" * 16)),
                    grpc.StatusCode.NOT_FOUND,
                ),
                (
                    lambda: api.ListMatches(spb.ListMatchesRequest(page_size=1 << 30)),
                    grpc.StatusCode.INVALID_ARGUMENT,
                ),
                (
                    lambda: tournaments.GetTournament(
                        tpb.GetTournamentRequest(tournament_id="0" * 16)
                    ),
                    grpc.StatusCode.NOT_FOUND,
                ),
                (
                    lambda: ladders.GetLadder(lpb.GetLadderRequest(ladder_id="0" * 16)),
                    grpc.StatusCode.NOT_FOUND,
                ),
            ]
            for _ in range(3):
                for make, code in refused:
                    error = await asyncio.wait_for(failure(make()), QUICK)
                    assert error.code() == code, error.details()
                    await whole(gate)

            async def broken(**kwargs: Any) -> Any:
                raise RuntimeError("a fault inside a read")

            original = server.arena.list_records
            server.arena.list_records = broken  # type: ignore[method-assign]
            try:
                error = await failure(api.ListMatches(spb.ListMatchesRequest(), timeout=QUICK))
                assert error.code() == grpc.StatusCode.INTERNAL
            finally:
                server.arena.list_records = original  # type: ignore[method-assign]
            await whole(gate)
            await served_promptly(server)

    run(scenario(), 30)


def test_forged_exemptions_are_gated_and_counted_as_the_peer(data_dir: Path) -> None:
    """A read carrying another replica's marker and a made-up peer secret, the gateway's
    metadata with a wrong secret, an X-Forwarded-For from an untrusted peer or a wrong
    operator token is neither exempt (it would run while the gate is held) nor counted as
    another address (it would queue): the peer's queue is full, so it is refused at once."""

    async def scenario() -> None:
        async with (
            served(data_dir, access=Access(operator_token=OPERATOR)) as server,
            channel_to(address_of(server)) as (_, api),
        ):
            server.service.guard.hosts.gateway_secret = secret()  # as under `serve --web`
            forgeries: list[tuple[tuple[str, str], ...]] = [
                ((FORWARDED_BY, "10.9.9.9:50051"), (PEER_SECRET, "00" * 32)),
                ((PEER_SECRET, ""),),
                ((WEB_CLIENT, f"{secret()} 10.1.2.3"),),
                ((WEB_CLIENT, " 10.1.2.3"),),
                ((FORWARDED_FOR, "10.4.5.6"),),
                (("authorization", f"Bearer {secret()}"),),
            ]
            async with gate_held(server) as gate:
                queued = [
                    api.ListMatches(spb.ListMatchesRequest(page_size=1), timeout=QUICK)
                    for _ in range(gate.limits.per_address)
                ]
                await eventually(
                    lambda: gate.waiting == gate.limits.per_address or None,
                    what="the peer's share of the queue taken",
                )
                for metadata in forgeries:
                    error = await failure(
                        api.ListMatches(
                            spb.ListMatchesRequest(page_size=1), metadata=metadata, timeout=1.0
                        )
                    )
                    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, metadata
                    assert "too many reads are waiting" in (error.details() or ""), metadata
                # The operator's token does pass, held gate or not.
                await api.ListMatches(
                    spb.ListMatchesRequest(page_size=1), metadata=auth(OPERATOR), timeout=QUICK
                )
                for call in queued:
                    call.cancel()
            await whole(gate)

    run(scenario(), 30)


def test_peers_vouch_only_with_the_shared_secret() -> None:
    """Before a replica has the shared secret nothing vouches, an empty one included; after,
    only the secret itself."""
    peers = Peers("10.0.0.1:50051")
    assert not peers.vouched(((PEER_SECRET, ""),))
    assert not peers.vouched(((PEER_SECRET, "anything"), (FORWARDED_BY, "10.0.0.2:1")))
    peers.secret = "ab" * 32
    assert not peers.vouched(((PEER_SECRET, "ab" * 31),))
    assert not peers.vouched(((PEER_SECRET, b"ab" * 32),))  # a binary value is no secret
    assert not peers.vouched(((FORWARDED_BY, "10.0.0.2:1"),))
    assert peers.vouched(((PEER_SECRET, "ab" * 32),))


def test_a_newcomer_is_served_after_at_most_one_read_of_a_busy_address(data_dir: Path) -> None:
    """Behind a trusted proxy, one client's read holds the gate and nineteen more wait, then
    another client's arrives: it is served after one more of the first client's (whose
    queue was first in line), not after nineteen."""

    async def scenario() -> None:
        async with (
            served(data_dir, access=Access(read_share=1.0), trusted_proxies="127.0.0.1") as server,
            channel_to(address_of(server)) as (_, api),
        ):
            with Stuck(server) as stuck:
                gate = server.service.guard.reads
                busy = [
                    api.ListMatches(
                        spb.ListMatchesRequest(page_size=n),
                        metadata=((FORWARDED_FOR, "10.0.0.1"),),
                        timeout=QUICK,
                    )
                    for n in range(1, 21)
                ]
                await asyncio.wait_for(stuck.entered.wait(), QUICK)
                await eventually(lambda: gate.waiting == 19 or None, what="19 reads queued")
                newcomer = api.ListMatches(
                    spb.ListMatchesRequest(page_size=99),
                    metadata=((FORWARDED_FOR, "10.0.0.2"),),
                    timeout=QUICK,
                )
                await eventually(lambda: gate.waiting == 20 or None, what="the newcomer queued")
                stuck.release.set()
                await asyncio.wait_for(asyncio.gather(newcomer, *busy), QUICK)
            assert stuck.sizes[:3] == [stuck.sizes[0], stuck.sizes[1], 99], stuck.sizes
            assert sorted(stuck.sizes) == [*range(1, 21), 99]
            await whole(gate)

    run(scenario(), 30)


def test_a_waiter_cancelled_as_its_turn_comes_passes_the_turn_on() -> None:
    """The gate gives B its turn (its future's result set) and B's task is cancelled before
    it resumes: the turn goes to C, and after C the gate is free."""

    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0))
        order: list[str] = []
        let_a_go = asyncio.Event()

        async def read(name: str, address: str, hold: asyncio.Event | None = None) -> None:
            async with gate.turn(address):
                order.append(name)
                if hold is not None:
                    await hold.wait()

        tasks: dict[str, asyncio.Task[None]] = {}

        async def a() -> None:
            async with gate.turn("a"):
                order.append("A")
                await let_a_go.wait()
            assert gate._running  # given to B, which has not resumed yet
            tasks["b"].cancel()

        first = asyncio.create_task(a())
        await asyncio.sleep(0)
        tasks["b"] = b = asyncio.create_task(read("B", "b"))
        await asyncio.sleep(0)
        c = asyncio.create_task(read("C", "c"))
        await eventually(lambda: gate.waiting == 2 or None, what="B and C queued")
        let_a_go.set()
        await asyncio.wait_for(first, QUICK)
        with pytest.raises(asyncio.CancelledError):
            await b
        await asyncio.wait_for(c, QUICK)
        assert order == ["A", "C"]
        await whole(gate)
        await asyncio.wait_for(read("D", "d"), QUICK)  # free: at once
        assert order == ["A", "C", "D"]

    run(scenario())


def test_a_waiter_cancelled_as_its_turn_comes_frees_the_gate_when_nobody_else_waits() -> None:
    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0))
        tasks: dict[str, asyncio.Task[None]] = {}

        async def a() -> None:
            async with gate.turn("a"):
                await asyncio.sleep(0.01)
            tasks["b"].cancel()  # its turn was just given

        async def b() -> None:
            async with gate.turn("b"):
                raise AssertionError("B's task was cancelled before it could read")

        tasks["a"] = asyncio.create_task(a())
        await asyncio.sleep(0)
        tasks["b"] = asyncio.create_task(b())
        await asyncio.wait_for(tasks["a"], QUICK)
        with pytest.raises(asyncio.CancelledError):
            await tasks["b"]
        await whole(gate)

    run(scenario())


def test_a_refusal_leaves_the_queue_as_it_was() -> None:
    """Reads refused at the door (their address's share, or the whole queue, taken) change
    nothing: the count stays that of the reads that wait."""

    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0, waiting=4, per_address=2))
        release = asyncio.Event()

        async def read(address: str) -> None:
            async with gate.turn(address):
                await release.wait()

        tasks = [asyncio.create_task(read("x"))]
        await asyncio.sleep(0)
        tasks += [asyncio.create_task(read(a)) for a in ("a", "a", "b", "b")]
        await eventually(lambda: gate.waiting == 4 or None, what="4 queued")
        for address in ("a", "b", "c") * 50:
            with pytest.raises(Throttled):
                await read(address)
        assert gate.waiting == 4 and set(gate._queues) == {"a", "b"}
        release.set()
        await asyncio.wait_for(asyncio.gather(*tasks), QUICK)
        await whole(gate)

    run(scenario())


def test_list_games_is_cheap_for_every_caller(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ListGames is neither gated nor limited (a client's first call): it must cost the event
    loop little. Before, every call built every game's description and options schema again
    (1.7 ms of the loop, more than a gated ListMatches); now they are built once."""
    built: list[str] = []
    describe = service_module.describe

    def counted(spec: GameSpec) -> spb.GameDescription:
        built.append(spec.name)
        return describe(spec)

    monkeypatch.setattr(service_module, "describe", counted)

    async def scenario() -> None:
        async with served(data_dir) as server, channel_to(address_of(server)) as (_, api):
            answers = [await api.ListGames(spb.ListGamesRequest(), timeout=QUICK) for _ in range(3)]
            assert answers[0] == answers[1] == answers[2]
            assert [g.name for g in answers[0].games] == list(GAMES)
            assert len(built) <= len(GAMES)  # at most once each, whoever asked first

    run(scenario())
