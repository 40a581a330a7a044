"""``PlayOpen.batched`` and ``StreamEventsRequest.batched``: a write's events on one message
(``more_events``).

One Hexathlon match, every seat on a batched Play call that acts and beside it an unbatched
Play call, an unbatched and a batched StreamEvents stream that only read: each reader of a
seat gets the same events (the same seqs, the same bytes per event) and the same turns, the
batched ones in fewer messages; the old-style readers never get ``more_events``; no seat sees
another's cards; a batched call resumed from a seq gets exactly the events after it; and the
Python client's reading of a batched call folds the same state as of an unbatched one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.clients.bots.state import SeatState
from cardarena.clients.client.seatplay import take
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT, auth, create, join_all, prompted, run, stub
from ..serverproc import ServerProcess

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration

PLAYERS = 4


@dataclass
class Start:
    """Nobody acts before every reader has its snapshot: all see the same live turns."""

    readers: int
    opened: int = 0
    all_open: asyncio.Event = field(default_factory=asyncio.Event)

    def open(self) -> None:
        self.opened += 1
        if self.opened == self.readers:
            self.all_open.set()


@dataclass
class Read:
    """What one reader got: its messages (the snapshot left out), in order."""

    messages: list[Any] = field(default_factory=list)

    def events(self) -> list[pb.Event]:
        """Every event, in the order read (a message's ``event`` before its ``more_events``)."""
        out: list[pb.Event] = []
        for message in self.messages:
            if message.HasField("event"):
                out.append(message.event)
                out.extend(getattr(message, "more_events", ()))
        return out

    def turns(self) -> list[pb.Turn]:
        return [message.turn for message in self.messages if message.HasField("turn")]

    def event_messages(self) -> int:
        return sum(message.HasField("event") for message in self.messages)


async def play_call(
    api: MatchServiceAsyncStub,
    match_id: str,
    seat: int,
    token: str,
    read: Read,
    *,
    batched: bool,
    acts: bool,
    after_seq: int = 0,
    start: Start | None = None,
) -> None:
    """One seat's Play call to the match's end; ``acts``: it answers every turn with the
    first legal action (else it only reads)."""
    outgoing: asyncio.Queue[spb.PlayRequest | None] = asyncio.Queue()
    opening = spb.PlayOpen(match_id=match_id, seat=seat, after_seq=after_seq, batched=batched)
    await outgoing.put(spb.PlayRequest(open=opening))

    async def requests() -> AsyncIterator[spb.PlayRequest]:
        while (request := await outgoing.get()) is not None:
            yield request

    call = api.Play(requests(), metadata=auth(token))
    async for response in call:
        kind = response.WhichOneof("kind")
        if kind != "snapshot":
            read.messages.append(response)
        elif start is not None:
            start.open()
            await start.all_open.wait()
        if not acts:
            continue
        if (prompt := prompted(response)) is None:
            continue
        legal, seq = prompt
        act = spb.PlayAction(action=legal[0], expected_seq=seq, request_id=f"s{seat}q{seq}")
        await outgoing.put(spb.PlayRequest(act=act))
    await outgoing.put(None)


async def stream_events(
    api: MatchServiceAsyncStub,
    match_id: str,
    seat: int,
    token: str,
    read: Read,
    start: Start,
    *,
    batched: bool = False,
) -> None:
    request = spb.StreamEventsRequest(match_id=match_id, seat=seat, batched=batched)
    async for response in api.StreamEvents(request, metadata=auth(token)):
        if response.WhichOneof("kind") != "snapshot":
            read.messages.append(response)
        else:
            start.open()


def assert_own_cards_only(events: Sequence[pb.Event], seat: int) -> None:
    dealt = [event.dealt for event in events if event.HasField("dealt")]
    assert dealt, "the match was dealt"
    for deal in dealt:
        for holder, hand in enumerate(deal.hands):
            if holder == seat:
                assert list(hand.cards) and not hand.hidden
            else:
                assert not list(hand.cards) and hand.hidden


def folded(seat: int, messages: Sequence[Any]) -> tuple[SeatState, list[int]]:
    """A seat's state folded from its messages by the Python client, and the seqs it saw."""
    state, seen = SeatState("m", seat), []
    for message in messages:
        take(message, state, lambda _, event: seen.append(event.seq))
    return state, seen


def test_batched_play_gets_every_event_in_fewer_messages(server_process: ServerProcess) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server_process.address) as channel:
            api = stub(channel)
            match = await create(
                api, "hexathlon", PLAYERS, seed=bytes(32), rounds=["pass", "clubs"]
            )
            match_id = match.match_id
            tokens = await join_all(api, match_id, PLAYERS)
            batched = [Read() for _ in range(PLAYERS)]
            unbatched = [Read() for _ in range(PLAYERS)]
            old_style = [Read() for _ in range(PLAYERS)]
            streamed = [Read() for _ in range(PLAYERS)]  # StreamEvents, batched
            start = Start(4 * PLAYERS)
            await asyncio.gather(
                *(
                    play_call(api, match_id, s, t, batched[s], batched=True, acts=True, start=start)
                    for s, t in enumerate(tokens)
                ),
                *(
                    play_call(
                        api, match_id, s, t, unbatched[s], batched=False, acts=False, start=start
                    )
                    for s, t in enumerate(tokens)
                ),
                *(
                    stream_events(api, match_id, s, t, old_style[s], start)
                    for s, t in enumerate(tokens)
                ),
                *(
                    stream_events(api, match_id, s, t, streamed[s], start, batched=True)
                    for s, t in enumerate(tokens)
                ),
            )
            info = await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=RPC_TIMEOUT)
            last = info.match.last_seq
            assert info.match.status == spb.MATCH_STATUS_ENDED
            log = await api.GetMatchLog(
                spb.GetMatchLogRequest(match_id=match_id), timeout=RPC_TIMEOUT
            )
            assert len(log.entries) == last

            for seat in range(PLAYERS):
                mine = batched[seat].events()
                theirs = unbatched[seat].events()
                assert [e.seq for e in mine] == list(range(1, last + 1))
                assert [e.SerializeToString() for e in mine] == [
                    e.SerializeToString() for e in theirs
                ]
                for other in (old_style[seat], streamed[seat]):
                    assert [e.SerializeToString() for e in other.events()] == [
                        e.SerializeToString() for e in theirs
                    ]
                    assert other.turns() == unbatched[seat].turns()
                assert batched[seat].turns() == unbatched[seat].turns()
                # Each write on one message, whichever the call: the same split into messages.
                assert [
                    [e.seq for e in (m.event, *m.more_events)]
                    for m in streamed[seat].messages
                    if m.HasField("event")
                ] == [
                    [e.seq for e in (m.event, *m.more_events)]
                    for m in batched[seat].messages
                    if m.HasField("event")
                ]
                # A turn rides on the last event of its write: on a batched message, after
                # every event the message holds.
                for message in (*batched[seat].messages, *streamed[seat].messages):
                    if message.HasField("turn") and message.HasField("event"):
                        carried = [message.event, *message.more_events]
                        assert message.turn.seq == carried[-1].seq
                    assert [e.seq for e in message.more_events] == list(
                        range(
                            message.event.seq + 1, message.event.seq + 1 + len(message.more_events)
                        )
                    )
                # Fewer messages: a trick's close (and a deal's entries) on its write's message.
                assert batched[seat].event_messages() < unbatched[seat].event_messages() - 20
                assert any(len(m.more_events) for m in batched[seat].messages)
                assert not any(len(m.more_events) for m in unbatched[seat].messages)
                assert not any(len(m.more_events) for m in old_style[seat].messages)
                assert_own_cards_only(mine, seat)
                assert_own_cards_only(streamed[seat].events(), seat)
                # Only the seat's own cards: the other readers of the seat saw what it saw.
                assert_own_cards_only(theirs, seat)
                # The Python client folds the same state from either.
                their_state, their_seen = folded(seat, unbatched[seat].messages)
                assert their_seen == list(range(1, last + 1))
                for reader in (batched[seat], streamed[seat]):
                    state, seen = folded(seat, reader.messages)
                    assert seen == their_seen
                    assert (state.seq, state.hand, state.totals) == (
                        their_state.seq,
                        their_state.hand,
                        their_state.totals,
                    )

            # Resumed from a seq (the match over): the history after it, exactly, each once.
            resumed = Read()
            middle = last // 2
            await play_call(
                api, match_id, 1, tokens[1], resumed, batched=True, acts=False, after_seq=middle
            )
            assert [e.seq for e in resumed.events()] == list(range(middle + 1, last + 1))
            assert [e.SerializeToString() for e in resumed.events()] == [
                e.SerializeToString() for e in unbatched[1].events()[middle:]
            ]

    run(scenario(), 120)
