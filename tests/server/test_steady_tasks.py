"""Work run to completion: in a task of its own, except in a task promised never to be
cancelled mid-way (a Play call's acting task), where it runs directly."""

from __future__ import annotations

import asyncio

from cardarena.server.hosting import steady, to_completion


async def _tasks_seen() -> asyncio.Task[object] | None:
    return asyncio.current_task()


def test_work_outlives_a_cancelled_caller() -> None:
    asyncio.run(_outlives())


async def _outlives() -> None:
    done = asyncio.Event()

    async def work() -> None:
        await asyncio.sleep(0.01)
        done.set()

    async def call() -> None:
        await to_completion(work())

    caller = asyncio.create_task(call())
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.sleep(0.05)
    assert caller.cancelled()
    assert done.is_set()


def test_a_steady_task_runs_the_work_itself() -> None:
    asyncio.run(_steady())


async def _steady() -> None:
    async def acting() -> tuple[object, object]:
        return asyncio.current_task(), await to_completion(_tasks_seen())

    plain = asyncio.create_task(acting())
    own, ran_in = await plain
    assert ran_in is not own  # a task of its own

    task = asyncio.create_task(acting())
    steady(task)
    own, ran_in = await task
    assert ran_in is own  # no task, no shield


def test_the_caller_gets_the_result_or_the_error() -> None:
    async def fine() -> int:
        await asyncio.sleep(0)
        return 7

    async def failing() -> int:
        await asyncio.sleep(0)
        raise ValueError("no")

    async def main() -> None:
        assert await to_completion(fine()) == 7
        try:
            await to_completion(failing())
        except ValueError as error:
            assert str(error) == "no"
        else:
            raise AssertionError("the error was lost")

    asyncio.run(main())
