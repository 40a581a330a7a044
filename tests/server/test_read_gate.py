"""The gate anonymous reads take turns at (``server.api.reads``): one read at a time, a pause
after each in proportion to what it cost, waiting addresses served in turn, and a queue that
refuses rather than grows."""

from __future__ import annotations

import asyncio

import pytest

from cardarena.server.api.reads import WAITING_FLOOR, ReadGate, ReadLimits
from cardarena.server.errors import Throttled

from ..calls import run


class Reader:
    """Reads at the gate that hold it until released, recording the order they ran in."""

    def __init__(self, gate: ReadGate) -> None:
        self.gate = gate
        self.ran: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self.release: dict[str, asyncio.Event] = {}

    async def read(self, name: str, address: str) -> None:
        release = self.release.setdefault(name, asyncio.Event())
        async with self.gate.turn(address):
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.ran.append(name)
            await release.wait()
            self.running -= 1


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_one_read_at_a_time_and_waiting_addresses_take_turns() -> None:
    """A1 holds the gate; A2, A3 then B1 wait. After A1, A's next read goes, then A's queue
    goes to the back: B1 comes before A3 although it came later."""

    async def scenario() -> list[str]:
        reader = Reader(ReadGate(ReadLimits(share=1.0)))
        tasks = []
        for name, address in (("A1", "a"), ("A2", "a"), ("A3", "a"), ("B1", "b")):
            tasks.append(asyncio.create_task(reader.read(name, address)))
            await settle()
        assert reader.ran == ["A1"] and reader.gate.waiting == 3
        for name in ("A1", "A2", "B1", "A3"):
            await settle()
            reader.release[name].set()
        await asyncio.gather(*tasks)
        assert reader.most_at_once == 1
        return reader.ran

    assert run(scenario()) == ["A1", "A2", "B1", "A3"]


def test_a_full_queue_refuses_at_once_with_a_retry_delay() -> None:
    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0, waiting=3, per_address=2))
        reader = Reader(gate)
        first = asyncio.create_task(reader.read("held", "a"))
        await settle()
        queued = [asyncio.create_task(reader.read(f"a{n}", "a")) for n in range(2)]
        await settle()
        with pytest.raises(Throttled, match="too many reads are waiting") as refused:
            await reader.read("a-too-many", "a")  # its address's share of the queue is taken
        assert refused.value.retry_after_ms >= 1
        queued.append(asyncio.create_task(reader.read("b0", "b")))
        await settle()
        with pytest.raises(Throttled):
            await reader.read("c0", "c")  # the whole queue is full
        for event in reader.release.values():
            event.set()
        for name in ("a0", "a1", "b0"):
            reader.release.setdefault(name, asyncio.Event()).set()
        await asyncio.gather(first, *queued)
        assert gate.waiting == 0

    run(scenario())


def test_once_half_the_queue_is_taken_each_address_waits_at_most_the_floor() -> None:
    """However many addresses came first, the other half of the queue is there for
    newcomers, :data:`WAITING_FLOOR` each."""

    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0, waiting=16, per_address=32))
        reader = Reader(gate)
        tasks = [asyncio.create_task(reader.read("held", "x"))]
        await settle()

        async def queue(address: str) -> int:
            queued = 0
            while True:
                task = asyncio.create_task(reader.read(f"{address}{queued}", address))
                await settle()
                if task.done():  # refused at once
                    assert isinstance(task.exception(), Throttled)
                    return queued
                tasks.append(task)
                queued += 1

        assert await queue("a") == 8  # half the queue: then the floor, which it holds already
        assert await queue("b") == WAITING_FLOOR
        assert await queue("c") == WAITING_FLOOR
        assert await queue("d") == 0  # the queue is full
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert gate.waiting == 0

    run(scenario())


def test_a_read_that_waited_too_long_is_refused_and_leaves_no_trace() -> None:
    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0, wait_seconds=0.05))
        reader = Reader(gate)
        held = asyncio.create_task(reader.read("held", "a"))
        await settle()
        with pytest.raises(Throttled, match="waited too long"):
            await reader.read("late", "b")
        assert gate.waiting == 0
        reader.release["held"].set()
        await held
        reader.release["next"] = asyncio.Event()
        reader.release["next"].set()
        await reader.read("next", "b")  # the gate is whole: the next read goes
        assert reader.ran == ["held", "next"]

    run(scenario())


def test_a_caller_that_goes_away_while_waiting_gives_its_place_back() -> None:
    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=1.0))
        reader = Reader(gate)
        held = asyncio.create_task(reader.read("held", "a"))
        await settle()
        gone = asyncio.create_task(reader.read("gone", "b"))
        await settle()
        assert gate.waiting == 1
        gone.cancel()
        await settle()
        assert gate.waiting == 0
        reader.release["held"].set()
        await held
        reader.release["after"] = asyncio.Event()
        reader.release["after"].set()
        await reader.read("after", "c")
        assert reader.ran == ["held", "after"]

    run(scenario())


def test_after_a_read_the_gate_pauses_for_what_it_cost() -> None:
    """At a share of a quarter, a read that held the gate 10 ms shuts it 30 ms more: a read
    that comes at once waits (queued), then runs by itself once the pause is over."""
    now = [100.0]

    async def scenario() -> None:
        gate = ReadGate(ReadLimits(share=0.25), clock=lambda: now[0])
        async with gate.turn("a"):
            now[0] += 0.010
        assert gate._open_at == pytest.approx(now[0] + 0.030)
        second = asyncio.create_task(gate.turn("b").__aenter__())
        await settle()
        assert gate.waiting == 1 and not second.done()
        now[0] += 0.031  # the pause is over by the gate's clock; its timer wakes the waiter
        await asyncio.wait_for(second, 5)
        assert gate.waiting == 0

    run(scenario())


def test_the_share_is_checked() -> None:
    for share in (0.0, -1.0, 1.5):
        with pytest.raises(ValueError, match="read share"):
            ReadLimits(share=share)
