"""A director seats a match wherever its writer is (``server.tournaments.seating``): here, at a
live replica that writes it (forwarded), or, when that replica does not answer, here once its
lease has run out. Fakes stand in for the arena and the peers: the paths, not the network."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cardarena.server.errors import NotRunning
from cardarena.server.tournaments import seating
from cardarena.server.tournaments.seating import Join, seat_all
from cardarena.v1 import service_pb2 as spb

JOINS = [Join(0, "a", "t" * 40, "j" * 40), Join(1, "b", "u" * 40, "k" * 40)]


class Local:
    def __init__(self) -> None:
        self.joined: list[tuple[int, str]] = []

    async def join(self, seat: int, name: str, **secrets: str) -> tuple[int, str]:
        self.joined.append((seat, secrets["token"]))
        return seat, secrets["token"]


class FakeArena:
    """``writer_of`` names another replica ``elsewhere_for`` times, then answers here."""

    def __init__(self, elsewhere_for: int) -> None:
        self.left = elsewhere_for
        self.local = Local()

    async def writer_of(self, match_id: str) -> Any:
        if self.left > 0:
            self.left -= 1
            return "10.0.0.2:50051"
        return self.local


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seating, "RETRY_SECONDS", 0.0)


def test_a_match_written_here_is_seated_here() -> None:
    arena = FakeArena(0)
    written: object = asyncio.run(seat_all(arena, "m", JOINS, None))  # type: ignore[arg-type]
    assert written is arena.local
    assert arena.local.joined == [(0, "t" * 40), (1, "u" * 40)]


def test_a_live_writer_elsewhere_is_sent_every_join() -> None:
    sent: list[tuple[str, spb.JoinMatchRequest]] = []

    async def elsewhere(address: str, request: spb.JoinMatchRequest) -> bool:
        sent.append((address, request))
        return True

    arena = FakeArena(5)
    written = asyncio.run(seat_all(arena, "m", JOINS, elsewhere))  # type: ignore[arg-type]
    assert written is None and not arena.local.joined
    assert [(a, r.match_id, r.seat, r.token, r.join_secret) for a, r in sent] == [
        ("10.0.0.2:50051", "m", 0, "t" * 40, "j" * 40),
        ("10.0.0.2:50051", "m", 1, "u" * 40, "k" * 40),
    ]


def test_a_dead_writer_is_waited_out_until_the_match_comes_here() -> None:
    tries: list[str] = []

    async def silent(address: str, request: spb.JoinMatchRequest) -> bool:
        tries.append(address)
        return False  # the replica does not answer: its lease will run out

    arena = FakeArena(3)
    written: object = asyncio.run(seat_all(arena, "m", JOINS, silent))  # type: ignore[arg-type]
    assert written is arena.local
    assert len(arena.local.joined) == 2 and len(tries) == 3


def test_a_match_that_ended_elsewhere_says_so() -> None:
    async def ended(address: str, request: spb.JoinMatchRequest) -> bool:
        raise NotRunning("the match has ended")

    with pytest.raises(NotRunning):
        asyncio.run(seat_all(FakeArena(1), "m", JOINS, ended))  # type: ignore[arg-type]
