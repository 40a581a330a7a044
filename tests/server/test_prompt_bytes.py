"""A YourTurn's legal actions are parsed from bytes made once per action: the same message,
and the same bytes, as one built from the actions' messages."""

from __future__ import annotations

from cardarena.engine import PASS, choose_trump, exclude
from cardarena.server.hosting import timing
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb


def test_legal_actions_from_bytes_made_once_are_the_messages() -> None:
    every = [*range(52), PASS, exclude(0), exclude(3), choose_trump(2)]
    for legal in ([], [PASS], every, every[::-1], [7, 7]):
        for _ in range(2):  # the second time from the bytes made the first
            made = pb.YourTurn(seq=300, deadline_unix_ms=1_780_000_000_123, bank_ms=5)
            made.MergeFromString(b"".join([timing._legal_field(a) for a in legal]))
            built = pb.YourTurn(
                seq=300,
                legal_actions=[codec.action_to_pb(a) for a in legal],
                deadline_unix_ms=1_780_000_000_123,
                bank_ms=5,
            )
            assert made == built
            assert made.SerializeToString() == built.SerializeToString()
