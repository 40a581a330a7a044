"""A reader's mailbox behaves as the asyncio.Queue it replaced, for one reader."""

from __future__ import annotations

import asyncio
from typing import TypeVar

import pytest

from cardarena.server.hosting.mailbox import Mailbox

T = TypeVar("T")


def test_items_come_out_in_order_and_a_full_mailbox_refuses_more() -> None:
    box: Mailbox[int] = Mailbox(3)
    for item in (1, 2, 3):
        box.put_nowait(item)
    assert box.qsize() == 3
    with pytest.raises(asyncio.QueueFull):
        box.put_nowait(4)
    assert [box.get_nowait() for _ in range(3)] == [1, 2, 3]
    assert box.empty()
    with pytest.raises(asyncio.QueueEmpty):
        box.get_nowait()


def test_a_mailbox_holds_something() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Mailbox(0)


async def waiting(box: Mailbox[T]) -> asyncio.Task[T]:
    """A reader already waiting on ``box`` (its task has run up to the wait)."""
    reader = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    return reader


def test_a_waiting_reader_wakes_for_the_next_item() -> None:
    async def scenario() -> None:
        box: Mailbox[str] = Mailbox(2)
        reader = await waiting(box)
        assert not reader.done()
        box.put_nowait("event")
        assert await asyncio.wait_for(reader, 5) == "event"
        assert box.empty()

    asyncio.run(scenario())


def test_a_reader_cancelled_while_waiting_leaves_the_mailbox_usable() -> None:
    async def scenario() -> None:
        gone = await waiting(box := Mailbox[int](2))
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        box.put_nowait(7)  # no waiter is woken for nothing, and the item stays
        assert await asyncio.wait_for(box.get(), 5) == 7

    asyncio.run(scenario())


def test_a_second_reader_at_once_is_refused() -> None:
    async def scenario() -> None:
        first = await waiting(box := Mailbox[int](2))
        with pytest.raises(RuntimeError, match="one reader"):
            await box.get()
        box.put_nowait(1)
        assert await asyncio.wait_for(first, 5) == 1

    asyncio.run(scenario())
