"""A published event goes out as bytes made once per kind of stream message: those bytes must
be exactly the message a stream would otherwise have built and serialized, for every stream
kind, with and without a turn, short and long."""

from __future__ import annotations

import pytest

from cardarena.server.api.streams import TOLD_FIELDS, response
from cardarena.server.hosting import Told
from cardarena.server.hosting.subscribers import Readers
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

KINDS = (spb.StreamEventsResponse, spb.WatchMatchResponse, spb.PlayResponse)

SHORT = pb.Event(
    seq=7, card_played=pb.CardPlayed(seat=2, card=pb.Card(suit=pb.SUIT_CLUBS, rank=12))
)
LONG = pb.Event(seq=300, match_cancelled=pb.MatchCancelled(reason="x" * 500))
TURN = pb.Turn(seq=7, seat=3, deadline_unix_ms=1_800_000_000_000)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("event", "turn"),
    [(SHORT, TURN), (SHORT, None), (LONG, TURN), (LONG, None), (None, TURN)],
)
def test_told_bytes_are_the_message_serialized(
    kind: type[spb.PlayResponse], event: pb.Event | None, turn: pb.Turn | None
) -> None:
    told = Told(event, turn)
    sent = response(kind, told)
    assert isinstance(sent, bytes)
    parsed = kind.FromString(sent)
    expected = kind()
    if event is not None:
        expected.event.CopyFrom(event)
    if turn is not None:
        expected.turn.CopyFrom(turn)
    assert parsed == expected
    assert sent == expected.SerializeToString()
    assert response(kind, told) is sent  # made once per kind: the same bytes again


def test_the_stored_bytes_are_sent_as_they_are() -> None:
    """A reader that sees an event whole is sent the bytes the store holds."""
    readers = Readers(log=None)
    seat, spectator = readers.subscribe(0), readers.subscribe(None)
    payload = SHORT.SerializeToString()
    readers.publish([SHORT], TURN, [payload])
    mine, theirs = seat.queue.get_nowait(), spectator.queue.get_nowait()
    assert isinstance(mine, Told) and mine is theirs  # a public event: one Told for all
    assert mine.payload is payload
    event_field, turn_field = TOLD_FIELDS[spb.PlayResponse]
    assert spb.PlayResponse.FromString(mine.wire(event_field, turn_field)) == spb.PlayResponse(
        event=SHORT, turn=TURN
    )


def test_a_private_projection_has_bytes_of_its_own() -> None:
    """A dealt hand is hidden from the other seats: each kind of reader gets its own bytes."""
    dealt = pb.Event(
        seq=3,
        dealt=pb.Dealt(
            hands=[
                pb.Hand(cards=[pb.Card(suit=pb.SUIT_HEARTS, rank=2)]),
                pb.Hand(cards=[pb.Card(suit=pb.SUIT_SPADES, rank=3)]),
            ]
        ),
    )
    readers = Readers(log=None)
    first, second = readers.subscribe(0), readers.subscribe(1)
    readers.publish([dealt], None, [dealt.SerializeToString()])
    a, b = first.queue.get_nowait(), second.queue.get_nowait()
    assert isinstance(a, Told) and isinstance(b, Told) and a is not b
    fields = TOLD_FIELDS[spb.StreamEventsResponse]
    shown = spb.StreamEventsResponse.FromString(a.wire(*fields)).event.dealt.hands
    assert list(shown[0].cards) and not list(shown[1].cards) and shown[1].hidden
