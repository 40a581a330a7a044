"""A tournament's own error leaves its task group bare, on every 3.11 (3.11.2 included).

Before CPython 3.11.4 a ``raise`` inside ``except*`` came out wrapped in a new ExceptionGroup,
so the runner catches the group whole and picks the error out itself (``first_of``).
"""

from __future__ import annotations

import asyncio

import pytest

from cardarena.clients.tournament.config import TournamentError
from cardarena.clients.tournament.runner import first_of


def test_first_of_finds_the_first_error_of_a_kind_however_deeply_nested() -> None:
    wanted = TournamentError("the server refused")
    group = ExceptionGroup(
        "outer", [ValueError("x"), ExceptionGroup("inner", [wanted]), TournamentError("later")]
    )
    assert first_of(group, TournamentError) is wanted
    assert first_of(ExceptionGroup("none", [ValueError("x")]), TournamentError) is None


def test_a_task_group_s_tournament_error_is_raised_bare() -> None:
    async def failing() -> None:
        raise TournamentError("no such game")

    async def run() -> None:
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(failing())
        except ExceptionGroup as errors:
            raise (first_of(errors, TournamentError) or errors) from None

    with pytest.raises(TournamentError, match="no such game") as caught:
        asyncio.run(run())
    assert type(caught.value) is TournamentError
