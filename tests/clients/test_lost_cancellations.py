"""Whatever the clients cancel ends, even a task whose first cancellation was lost.

Why: grpc.aio can lose a cancellation (a task cancelled while gRPC sets up a call goes on as if
nothing happened), so cancelling once and waiting, as ``asyncio.wait_for``, a TaskGroup or a
bare ``task.cancel()`` do, waited out a dead server's whole retry period, or for ever, or left a
seat playing on. Each test here stands such a task in for the gRPC call (one that catches its
first ``CancelledError`` and carries on) and fails, by its bound, where a single cancel is
trusted; the house worker's own case is ``test_house_worker_exit``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

import grpc
import pytest

from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import Ticket, Unreachable, cancelling
from cardarena.clients.client.cancelling import gather_or_cancel, wait_within
from cardarena.clients.client.channel import wait_connected
from cardarena.clients.tournament import entrant as entrant_module
from cardarena.clients.tournament import match as match_module
from cardarena.clients.tournament import runner
from cardarena.clients.tournament.botspec import parse_bot
from cardarena.clients.tournament.config import TournamentConfig, TournamentError
from cardarena.clients.tournament.entrant import play_entrant
from cardarena.competition import MatchPlan
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import run

T = TypeVar("T")

CARRY_ON_S = 4.0
"""How long a call whose cancellation was lost carries on (retrying a gone server, say)."""
QUICK_S = 2.0
"""How long a scenario may take: ample with the fixes, well short of :data:`CARRY_ON_S`."""


GRACE_S = 0.5
"""The cleanup grace the tests give (``cancelling.CLEANUP_S``, 3 s, shortened)."""


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cancelling, "CLEANUP_S", GRACE_S)
    monkeypatch.setattr(entrant_module, "CLEANUP_S", GRACE_S)


CALLS_RUNNING: set[object] = set()
"""The stand-ins for gRPC calls that are running: none once whatever cancelled them is done."""


async def stubborn(*_: Any, **__: Any) -> Any:
    """A gRPC call whose first cancellation is lost: it carries on as if nothing happened."""
    call = object()
    CALLS_RUNNING.add(call)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(3600)
        await asyncio.sleep(CARRY_ON_S)
    finally:
        CALLS_RUNNING.discard(call)


def run_quickly(scenario: Coroutine[Any, Any, T]) -> T:
    """Run ``scenario``, which must end well before a lost cancellation's call would."""
    started = time.monotonic()
    result = run(scenario, 3 * CARRY_ON_S)
    assert time.monotonic() - started < QUICK_S, "it waited for a lost cancellation's call"
    return result


def test_wait_within_keeps_its_bound_and_its_result() -> None:
    async def scenario() -> None:
        assert await wait_within(asyncio.sleep(0, "answer"), 1) == "answer"
        with pytest.raises(TimeoutError):
            await wait_within(stubborn(), 0.05)
        assert not CALLS_RUNNING

    run_quickly(scenario())


def test_gather_or_cancel_gives_every_result_in_order() -> None:
    async def later(value: int) -> int:
        await asyncio.sleep(0.01 * (3 - value))
        return value

    assert run_quickly(gather_or_cancel(later(v) for v in range(3))) == [0, 1, 2]


def test_gather_or_cancel_cancelled_ends_every_task() -> None:
    async def scenario() -> None:
        gathering = asyncio.create_task(gather_or_cancel([stubborn(), stubborn()]))
        await asyncio.sleep(0.01)
        gathering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gathering
        assert not CALLS_RUNNING

    run_quickly(scenario())


def test_gather_or_cancel_lets_a_task_finish_its_cleanup_within_the_grace() -> None:
    """A seat told its match is over closes its external bot (up to 2 s): re-cancelling it at
    once would kill the bot instead of letting it exit."""
    cleaned: list[bool] = []

    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("a seat failed")

    async def cleans_up() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(GRACE_S / 2)  # a cancellation now would cut this short
            cleaned.append(True)

    async def scenario() -> None:
        with pytest.raises(BaseExceptionGroup):
            await gather_or_cancel([fails(), cleans_up()])
        assert cleaned == [True]

    run_quickly(scenario())


class DeadChannel:
    """A channel to no server, whose wait for a connection loses its first cancellation."""

    async def channel_ready(self) -> None:
        await stubborn()


def test_a_dead_address_is_named_even_if_the_wait_loses_its_cancellation() -> None:
    async def scenario() -> None:
        with pytest.raises(Unreachable, match="no server answers at nowhere:1"):
            await wait_connected(DeadChannel(), "nowhere:1", 0.05)  # type: ignore[arg-type]
        assert not CALLS_RUNNING

    run_quickly(scenario())


class StuckClient:
    """A client whose calls to a gone server lose their first cancellation; ``failing`` seats
    fail at once."""

    def __init__(self, failing: frozenset[int] = frozenset()) -> None:
        self.failing = failing
        self.cancel_match = stubborn

    async def create_match(self, game: str, **_: Any) -> spb.MatchInfo:
        return spb.MatchInfo(match_id="m1", game=game)

    async def join(self, match_id: str, *, seat: int, **_: Any) -> Ticket:
        return Ticket(match_id, seat, "token")

    async def play(self, ticket: Ticket, **_: Any) -> Any:
        if ticket.seat in self.failing:
            raise RuntimeError("this seat's bot broke the loop")
        return await stubborn()


def config(concurrency: int = 1) -> TournamentConfig:
    bots = [parse_bot("random"), parse_bot("rules")]
    return TournamentConfig(
        address="nowhere:1", game="pentathlon", bots=bots, concurrency=concurrency
    )


def test_a_match_that_cannot_be_cancelled_is_abandoned_within_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(match_module, "ABANDON_WITHIN_S", 0.05)

    async def scenario() -> None:
        client: Any = StuckClient()
        await match_module._abandon(client, "m1", "secret", "the server went away")
        assert not CALLS_RUNNING

    run_quickly(scenario())


def test_a_seat_that_fails_ends_its_match_though_another_seat_plays_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(match_module, "ABANDON_WITHIN_S", 0.05)
    plan = MatchPlan(index=0, group=0, deal=0, rotation=0, seed=bytes(32), seats=(0, 1))

    async def scenario() -> None:
        client: Any = StuckClient(failing=frozenset({0}))
        outcome = await match_module.play_match(client, config(), plan, 2, False)
        assert "this seat's bot broke the loop" in (outcome.error or "")
        assert not CALLS_RUNNING

    run_quickly(scenario())


def test_a_tournament_error_stops_every_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    async def play_match(*_: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            return await stubborn()  # a worker creating its match on a refusing server
        await asyncio.sleep(0.01)
        raise TournamentError("the server refused the match")

    class Client(StuckClient):
        def __init__(self, *_: Any, **__: Any) -> None:
            super().__init__()

        async def __aenter__(self) -> Client:
            return self

        async def __aexit__(self, *_: object) -> None:
            pass

        async def list_games(self) -> list[spb.GameDescription]:
            return [spb.GameDescription(name="pentathlon", players=[2], default_players=2)]

    monkeypatch.setattr(runner, "ArenaClient", Client)
    monkeypatch.setattr(runner, "play_match", play_match)

    async def scenario() -> None:
        with pytest.raises(TournamentError, match="refused"):
            await runner.run_tournament(config(concurrency=2))
        assert not CALLS_RUNNING

    run_quickly(scenario())


def test_an_entrant_that_stops_leaves_no_match_playing() -> None:
    class Tournaments:
        async def enter(self, *_: Any, **__: Any) -> AsyncIterator[tpb.EnterResponse]:
            yield tpb.EnterResponse(match=tpb.MatchAssigned(match_id="m1", players=2))
            await asyncio.sleep(0.01)  # the match's seat is setting up its first call
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.PERMISSION_DENIED, grpc.aio.Metadata(), grpc.aio.Metadata()
            )

    class Client(StuckClient):
        tournaments = Tournaments()

    async def scenario() -> None:
        client: Any = Client()
        with pytest.raises(grpc.aio.AioRpcError):
            await play_entrant(client, "t1", "key", lambda _: PythonDecider(RandomBot))
        assert not CALLS_RUNNING

    run_quickly(scenario())
