"""The house's bookkeeping on a real arena, without its worker processes: a house seat is
known by its token alone (found again after a restart, never forged by a name or a chosen
seed), the bound counts seats until their match ends, and a match is cancelled once its
players have had no stream open for the idle bound (on a clock the test moves)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from cardarena.server.errors import HouseBotsOff, HouseFull
from cardarena.server.hosting import Arena, HostedMatch
from cardarena.server.house import HouseBot, HouseBots, HouseSettings
from cardarena.server.house.spec import bot_of_name, house_seat_of
from cardarena.server.store import SqliteStore
from cardarena.v1 import service_pb2 as spb

IDLE = 60.0


class Clock:
    """Monotonic seconds that move only when the test moves them."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def asked(seats: dict[int, str]) -> spb.CreateMatchRequest:
    return spb.CreateMatchRequest(
        game="triathlon",
        players=3,
        house_seats=[spb.HouseSeat(seat=s, bot=b) for s, b in seats.items()],
    )


def with_house(
    tmp_path: Path, body: Callable[[Arena, HouseBots, Clock], Awaitable[None]], seats: int = 3
) -> None:
    async def main() -> None:
        async with SqliteStore(tmp_path / "arena.sqlite3") as store:
            houses: list[HouseBots] = []

            def changed(hosted: HostedMatch) -> None:
                for house in houses:
                    house.match_changed(hosted)

            arena = Arena(store, on_change=changed)
            house = HouseBots(arena, HouseSettings(seats=seats, idle_seconds=IDLE))
            houses.append(house)
            clock = house.now = Clock()
            await body(arena, house, clock)

    asyncio.run(asyncio.wait_for(main(), 30))


async def created(arena: Arena, house: HouseBots, request: spb.CreateMatchRequest) -> HostedMatch:
    """What CreateMatch does: check, create, seat."""
    plan = house.planned(request, [])
    hosted = await arena.create(request.game, request.players, {"max_deals": 1})
    await plan.seat(hosted)
    return hosted


def test_names_say_the_bot_and_nothing_else_is_a_house_name() -> None:
    for bot in (HouseBot("random"), HouseBot("rules"), HouseBot("mc", 50)):
        assert bot_of_name(bot.name) == bot
    for name in ("rules", "rules (House)", "mc (house)", "random 5ms (house)", "player"):
        assert bot_of_name(name) is None


def test_tokens_differ_by_match_seat_bot_and_seed() -> None:
    seed = bytes(32)
    token = HouseBot("rules").token(seed, "m1", 1)
    assert len(token) == 43 and token == HouseBot("rules").token(seed, "m1", 1)
    others = {
        HouseBot("rules").token(seed, "m2", 1),
        HouseBot("rules").token(seed, "m1", 2),
        HouseBot("random").token(seed, "m1", 1),
        HouseBot("rules").token(b"\1" * 32, "m1", 1),
    }
    assert token not in others and len(others) == 4


def test_house_seats_are_taken_and_found_again_by_their_tokens(tmp_path: Path) -> None:
    async def body(arena: Arena, house: HouseBots, clock: Clock) -> None:
        hosted = await created(arena, house, asked({1: "rules", 2: "mc"}))
        assert [s.name for s in hosted.seats] == ["", "rules (house)", "mc 50ms (house)"]
        assert house.count == 2
        assert [house_seat_of(hosted, s) for s in range(3)] == [
            None,
            HouseBot("rules"),
            HouseBot("mc", 50),
        ]
        # A player may call itself what it likes: without the token it is no house seat.
        await hosted.join(0, "random (house)")
        assert house_seat_of(hosted, 0) is None
        # After a restart: a new arena on the same store, a new house.
        again = Arena(arena.store)
        await again.load_unfinished()
        fresh = HouseBots(again, HouseSettings(seats=3))
        assert fresh.adopt() == 2
        assert sorted(fresh.matches[hosted.match_id].bots) == [1, 2]

    with_house(tmp_path, body)


def test_a_chosen_seed_makes_no_house_seat_even_with_the_derived_token(tmp_path: Path) -> None:
    async def body(arena: Arena, house: HouseBots, clock: Clock) -> None:
        seed = bytes(range(32))
        hosted = await arena.create("triathlon", 3, {"max_deals": 1}, seed=seed)
        bot = HouseBot("rules")
        await hosted.join(1, bot.name, bot.token(seed, hosted.match_id, 1))
        assert house_seat_of(hosted, 1) is None
        assert house.adopt() == 0

    with_house(tmp_path, body)


def test_the_bound_counts_seats_until_their_match_ends(tmp_path: Path) -> None:
    async def body(arena: Arena, house: HouseBots, clock: Clock) -> None:
        first = await created(arena, house, asked({1: "rules", 2: "random"}))
        with pytest.raises(
            HouseFull, match="at most 3 house seats at once, 1 free now and 2 asked"
        ):
            house.planned(asked({1: "rules", 2: "random"}), [])
        second = await created(arena, house, asked({1: "random"}))
        assert house.count == 3
        await first.cancel("done")
        assert house.count == 1 and first.match_id not in house.matches
        await second.cancel("done")
        assert house.count == 0

    with_house(tmp_path, body)


def test_a_house_that_is_off_refuses_house_seats_and_nothing_else(tmp_path: Path) -> None:
    async def body(arena: Arena, house: HouseBots, clock: Clock) -> None:
        assert house.offer() is None
        with pytest.raises(HouseBotsOff):
            house.planned(asked({1: "rules"}), [])
        assert house.planned(spb.CreateMatchRequest(game="triathlon"), []).bots == {}

    with_house(tmp_path, body, seats=0)


def test_a_match_is_cancelled_once_its_players_have_had_no_stream_for_the_idle_bound(
    tmp_path: Path,
) -> None:
    async def body(arena: Arena, house: HouseBots, clock: Clock) -> None:
        kept = await created(arena, house, asked({1: "rules", 2: "random"}))
        left = await created(arena, house, asked({1: "rules", 2: "random"}))
        for hosted in (kept, left):
            await hosted.join(0, "player")
            hosted.readers.subscribe(1)  # a house seat's own stream does not count
        reader = kept.readers.subscribe(0)
        clock.now += IDLE - 1
        await house.look()
        assert not kept.ended and not left.ended
        clock.now += 1
        await house.look()
        assert left.cancelled and not kept.ended
        assert house.count == 2
        kept.readers.unsubscribe(reader)  # the player closed the tab
        clock.now += IDLE - 1
        await house.look()
        assert not kept.ended
        clock.now += 1
        await house.look()
        assert kept.cancelled and house.count == 0

    with_house(tmp_path, body, seats=4)
