"""A write's events on one message for the readers that ask for it (``PlayOpen.batched``):
its bytes are exactly the PlayResponse protobuf would make, made once and shared by every
batched reader that sees the write alike, from the same per-event bytes the other readers
get; a seat's own cards go only to that seat's readers; other readers are unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from cardarena.server.api.streams import MORE_EVENTS, TOLD_FIELDS, response
from cardarena.server.hosting import Told, ToldBatch
from cardarena.server.hosting.subscribers import BATCH_EVENTS, Readers, batched
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb


def played(seq: int, seat: int = 0) -> pb.Event:
    return pb.Event(
        seq=seq, card_played=pb.CardPlayed(seat=seat, card=pb.Card(suit=pb.SUIT_CLUBS, rank=9))
    )


def closed(seq: int) -> pb.Event:
    return pb.Event(seq=seq, trick_won=pb.TrickWon(seat=2))


def dealt(seq: int) -> pb.Event:
    return pb.Event(
        seq=seq,
        dealt=pb.Dealt(
            hands=[
                pb.Hand(cards=[pb.Card(suit=pb.SUIT_HEARTS, rank=2)]),
                pb.Hand(cards=[pb.Card(suit=pb.SUIT_SPADES, rank=3)]),
            ]
        ),
    )


TURN = pb.Turn(seq=8, seat=3, deadline_unix_ms=1_800_000_000_000)
LONG = pb.Event(seq=9, match_cancelled=pb.MatchCancelled(reason="x" * 500))


@pytest.mark.parametrize("kind", [spb.PlayResponse, spb.StreamEventsResponse])
@pytest.mark.parametrize("turn", [TURN, None])
@pytest.mark.parametrize("events", [[played(7), closed(8)], [played(7), closed(8), LONG]])
def test_batch_bytes_are_the_message_serialized(
    events: list[pb.Event],
    turn: pb.Turn | None,
    kind: Any,  # PlayResponse or StreamEventsResponse
) -> None:
    """The same bytes protobuf would make, whichever the seat's stream (its turn field comes
    after ``more_events`` on a Play call, before it on StreamEvents)."""
    items = [Told(e, turn if i == len(events) - 1 else None) for i, e in enumerate(events)]
    batch = ToldBatch(items)
    sent = response(kind, batch)
    assert isinstance(sent, bytes)
    expected = kind(event=events[0], more_events=events[1:], turn=turn)
    assert kind.FromString(sent) == expected
    assert sent == expected.SerializeToString()
    assert response(kind, batch) is sent  # made once
    with pytest.raises(TypeError):  # only a seat's streams have more_events
        response(spb.WatchMatchResponse, batch)


def test_a_public_write_is_one_batch_for_every_batched_reader() -> None:
    readers = Readers(log=None)
    plain, spectator = readers.subscribe(0), readers.subscribe(None)
    mine, theirs = readers.subscribe(0, batched=True), readers.subscribe(1, batched=True)
    events = [played(7), closed(8)]
    payloads = [e.SerializeToString() for e in events]
    readers.publish(events, TURN, payloads)
    batch = mine.queue.get_nowait()
    assert isinstance(batch, ToldBatch) and theirs.queue.get_nowait() is batch
    assert mine.queue.empty() and theirs.queue.empty()
    # The readers that did not ask get the write as before: an item an event, and the very
    # Tolds (and stored bytes) the batch is made of.
    first, second = plain.queue.get_nowait(), plain.queue.get_nowait()
    assert isinstance(first, Told) and isinstance(second, Told) and plain.queue.empty()
    assert list(batch.items) == [first, second]
    assert [spectator.queue.get_nowait(), spectator.queue.get_nowait()] == [first, second]
    assert [first.payload, second.payload] == payloads
    assert first.turn is None and second.turn == TURN
    event_field, turn_field = TOLD_FIELDS[spb.PlayResponse]
    assert spb.PlayResponse.FromString(
        batch.wire(event_field, turn_field, MORE_EVENTS[spb.PlayResponse])
    ) == spb.PlayResponse(event=events[0], more_events=[events[1]], turn=TURN)


def test_one_event_or_a_turn_alone_is_sent_as_before() -> None:
    readers = Readers(log=None)
    plain, asked = readers.subscribe(0), readers.subscribe(0, batched=True)
    readers.publish([played(7)], TURN)
    readers.publish([], TURN)
    for _ in range(2):
        item = asked.queue.get_nowait()
        assert isinstance(item, Told) and item is plain.queue.get_nowait()


def test_a_private_write_is_batched_per_projection() -> None:
    """A deal: each seat's batched readers share one batch, with its own cards only."""
    readers = Readers(log=None)
    first = [readers.subscribe(0, batched=True), readers.subscribe(0, batched=True)]
    second = readers.subscribe(1, batched=True)
    spectator = readers.subscribe(None)
    events = [pb.Event(seq=5, round_started=pb.RoundStarted(round=1)), dealt(6)]
    readers.publish(events, TURN, [e.SerializeToString() for e in events])
    a, b = (sub.queue.get_nowait() for sub in first)
    c = second.queue.get_nowait()
    assert isinstance(a, ToldBatch) and a is b and isinstance(c, ToldBatch) and c is not a
    assert a.items[0] is c.items[0]  # the public entry: one Told for every reader
    fields = (*TOLD_FIELDS[spb.PlayResponse], MORE_EVENTS[spb.PlayResponse])
    for batch, seat in ((a, 0), (c, 1)):
        hands = spb.PlayResponse.FromString(batch.wire(*fields)).more_events[0].dealt.hands
        assert [bool(list(hand.cards)) for hand in hands] == [h == seat for h in range(2)]
        assert [hand.hidden for hand in hands] == [h != seat for h in range(2)]
    watched = [spectator.queue.get_nowait(), spectator.queue.get_nowait()]
    assert watched[0] is a.items[0]
    assert isinstance(watched[1], Told) and watched[1].event is not None
    assert not any(list(hand.cards) for hand in watched[1].event.dealt.hands)


def test_a_long_catch_up_comes_in_bounded_batches() -> None:
    """A follower publishes many writes at once: at most BATCH_EVENTS events a message."""
    items = [Told(played(seq), None) for seq in range(1, 2 * BATCH_EVENTS + 2)]
    chunks = batched(items)
    assert [len(c.items) if isinstance(c, ToldBatch) else 1 for c in chunks] == [
        BATCH_EVENTS,
        BATCH_EVENTS,
        1,
    ]
    assert chunks[-1] is items[-1]
