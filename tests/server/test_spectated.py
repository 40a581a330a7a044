"""A match's spectator history: read from the store once for every spectator, projected as a
spectator may see it (no hand but the spectator's, which is none), each later stream reading
only what was appended since, and dropped when the match's last spectator leaves."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from cardarena.server.api.spectated import ProjectedLog, SpectatorHistories
from cardarena.server.hosting import HostedMatch
from cardarena.server.store import StoredEvent
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

CARDS = [pb.Card(suit=pb.SUIT_HEARTS, rank=r) for r in (2, 3)]


def entry(seq: int) -> pb.Event:
    if seq == 2:  # a deal: every hand hidden from a spectator
        hands = [pb.Hand(cards=CARDS[:1]), pb.Hand(cards=CARDS[1:])]
        return pb.Event(seq=seq, dealt=pb.Dealt(hands=hands))
    return pb.Event(seq=seq, round_started=pb.RoundStarted(round=seq))


class Log:
    """What a hosted match's ``read_log`` answers from, counting the entries it reads."""

    match_id = "m1"

    def __init__(self, length: int) -> None:
        self.length = length
        self.read: list[int] = []

    async def read_log(self, *, after_seq: int = 0, limit: int | None = None) -> list[Any]:
        last = self.length if limit is None else min(self.length, after_seq + limit)
        seqs = range(after_seq + 1, last + 1)
        self.read += seqs
        return [StoredEvent("m1", s, entry(s).SerializeToString(), b"") for s in seqs]


def test_the_log_is_read_once_for_every_spectator_and_projected() -> None:
    async def scenario() -> None:
        log = Log(5)
        hosted = cast(HostedMatch, log)
        histories = SpectatorHistories()
        with histories.watching("m1") as first, histories.watching("m1") as second:
            assert first is second
            seen = await first.between(hosted, 0, 5)
            assert [t.seq for t in seen] == [1, 2, 3, 4, 5]
            assert log.read == [1, 2, 3, 4, 5]
            again = await second.between(hosted, 3, 5)
            assert again == seen[3:] and log.read == [1, 2, 3, 4, 5]  # nothing read again
            log.length = 7
            assert [t.seq for t in await second.between(hosted, 5, 7)] == [6, 7]
            assert log.read == [1, 2, 3, 4, 5, 6, 7]  # only what was appended
            assert await second.between(hosted, 7, 7) == []
            # As a spectator sees it: the deal's hands hidden; a public entry sent as stored.
            deal = spb.WatchMatchResponse.FromString(seen[1].wire(2, 4)).event.dealt
            assert all(hand.hidden and not hand.cards for hand in deal.hands)
            assert seen[0].payload == entry(1).SerializeToString()
        assert len(histories) == 0  # the last spectator left: nothing kept

    asyncio.run(scenario())


def test_spectators_arriving_together_share_one_read() -> None:
    async def scenario() -> None:
        log = Log(40)
        hosted = cast(HostedMatch, log)
        histories = SpectatorHistories()
        with histories.watching("m1") as kept:
            many = await asyncio.gather(*(kept.between(hosted, k, 40) for k in range(0, 40, 4)))
        assert log.read == list(range(1, 41))
        assert [[t.seq for t in seen] for seen in many] == [
            list(range(k + 1, 41)) for k in range(0, 40, 4)
        ]

    asyncio.run(scenario())


def test_a_seats_log_shows_its_own_hand_only() -> None:
    async def scenario() -> None:
        log = Log(3)
        seen = await ProjectedLog(seat=1).between(cast(HostedMatch, log), 1, 3)
        assert [t.seq for t in seen] == [2, 3]
        deal = spb.StreamEventsResponse.FromString(seen[0].wire(2, 4)).event.dealt
        assert [hand.hidden for hand in deal.hands] == [True, False]
        assert list(deal.hands[1].cards) == CARDS[1:] and not deal.hands[0].cards

    asyncio.run(scenario())
