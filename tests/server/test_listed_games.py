"""ListGames answers from bytes made once: the same message as one built whole, with the
house's offer or without it."""

from __future__ import annotations

import pytest

from cardarena.server.api.service import described_games, listed_games
from cardarena.server.house.spec import offer
from cardarena.v1 import service_pb2 as spb


@pytest.mark.parametrize("house", [None, offer(12, 30.0), offer(0, 0.0)])
def test_the_answer_is_the_message_built_whole(house: spb.HouseBots | None) -> None:
    whole = spb.ListGamesResponse(games=described_games())
    if house is not None:
        whole.house_bots.CopyFrom(house)
    answer = spb.ListGamesResponse.FromString(listed_games(house))
    assert answer == whole
    assert answer.HasField("house_bots") == (house is not None)
    assert [game.name for game in answer.games] == [game.name for game in described_games()]
