"""A match's spectator history: read from the store once for every spectator, projected as a
spectator may see it (no hand but the spectator's, which is none), each later stream reading
only what was appended since, and dropped when the match's last spectator leaves. A seat's
stream reads only the entries it asked for, projected by the rule of the round they are in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from cardarena.server.api.spectated import SpectatorHistories, seat_history
from cardarena.server.hosting import HostedMatch
from cardarena.server.hosting.subscribers import Readers
from cardarena.server.store import StoredEvent
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

CARDS = [pb.Card(suit=pb.SUIT_HEARTS, rank=r) for r in (2, 3)]


def entry(seq: int) -> pb.Event:
    if seq == 2:  # a deal: every hand hidden from a spectator
        hands = [pb.Hand(cards=CARDS[:1]), pb.Hand(cards=CARDS[1:])]
        return pb.Event(seq=seq, dealt=pb.Dealt(hands=hands))
    return pb.Event(seq=seq, round_started=pb.RoundStarted(round=seq))


def fan_tan(seq: int) -> pb.Event:
    """A log whose round at seq 2 allows voluntary passes, with a forced pass at each seq
    past 2: a seat that learns a pass was forced learns the passer holds no playable card."""
    if seq == 1:
        return pb.Event(seq=seq, round_started=pb.RoundStarted(round=1))
    if seq == 2:
        return pb.Event(seq=seq, round_started=pb.RoundStarted(round=2, voluntary_pass=True))
    return pb.Event(seq=seq, passed=pb.Passed(seat=0, reason=pb.PASS_REASON_FORCED))


class Log:
    """What a hosted match's ``read_log`` answers from, counting the entries it reads."""

    match_id = "m1"

    def __init__(self, length: int, entries: Callable[[int], pb.Event] = entry) -> None:
        self.length = length
        self.entries = entries
        self.read: list[int] = []
        self.readers = Readers(None)  # follows the rounds, as a hosted match's readers do
        for seq in range(1, length + 1):
            self.readers.note(entries(seq))

    async def read_log(self, *, after_seq: int = 0, limit: int | None = None) -> list[Any]:
        last = self.length if limit is None else min(self.length, after_seq + limit)
        seqs = range(after_seq + 1, last + 1)
        self.read += seqs
        return [StoredEvent("m1", s, self.entries(s).SerializeToString(), b"") for s in seqs]


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
        seen = await seat_history(cast(HostedMatch, log), 1, 1, 3)
        assert [t.seq for t in seen] == [2, 3]
        assert log.read == [2, 3]  # from where the seat asked, not from the log's start
        deal = spb.StreamEventsResponse.FromString(seen[0].wire(2, 4)).event.dealt
        assert [hand.hidden for hand in deal.hands] == [True, False]
        assert list(deal.hands[1].cards) == CARDS[1:] and not deal.hands[0].cards

    asyncio.run(scenario())


def test_a_seat_resuming_mid_round_keeps_the_rounds_rule_on_passes() -> None:
    """Read from seq 5, the round (started at seq 2, voluntary passes) is known only from the
    match's record of its rounds: a forced pass must still reach the seat as hidden."""

    async def scenario() -> None:
        log = Log(8, fan_tan)
        seen = await seat_history(cast(HostedMatch, log), 1, 5, 8)
        assert log.read == [6, 7, 8]
        for told in seen:
            passed = spb.StreamEventsResponse.FromString(told.wire(2, 4)).event.passed
            assert passed.reason == pb.PASS_REASON_HIDDEN
        # From the log's start the round's own RoundStarted tells the same.
        whole = await seat_history(cast(HostedMatch, Log(8, fan_tan)), 1, 0, 8)
        assert [t.wire(2, 4) for t in whole[5:]] == [t.wire(2, 4) for t in seen]

    asyncio.run(scenario())
