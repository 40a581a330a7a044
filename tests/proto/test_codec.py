"""The wire codec: every engine event survives the trip through cardarena.v1 unchanged."""

from __future__ import annotations

import pytest

from cardarena.engine import GAMES, PASS, choose_trump, exclude, new_match
from cardarena.engine.cards import JOKERS, french, spanish
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from ..helpers import play_out

GAME_PLAYERS = [(game, n) for game, spec in GAMES.items() for n in spec.players]


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_every_event_round_trips(game: str, players: int) -> None:
    options = {"first_dealer": "random"}
    log = play_out(new_match(game, players=players, seed=bytes([players]) * 32, options=options))
    for seq, event in enumerate(log, start=1):
        wire = codec.event_to_pb(event, seq, "m1")
        again = pb.Event.FromString(wire.SerializeToString())
        assert codec.event_from_pb(again) == event


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_entries_made_from_messages_made_once_are_the_same_bytes(game: str, players: int) -> None:
    """A play and a trick's close are made from messages made once per process: the entry,
    its bytes (what the hash chain covers) and what is written on it later are as if built
    afresh."""
    log = play_out(new_match(game, players=players, seed=bytes([players + 7]) * 32))
    for seq, event in enumerate(log, start=1):
        for _ in range(2):  # the second time, from the messages made the first
            fast = codec.event_to_pb(event, seq, "m1")
            fresh = codec._event_to_pb(
                event,
                seq,
                "m1",
                move_ms=0,
                reserved_seats=(),
                forfeit_after=0,
                tournament_id="",
                clocks=None,
            )
            assert fast == fresh
            assert fast.SerializeToString() == fresh.SerializeToString()
            fast.think_ms = fresh.think_ms = 1234  # written on the entry after it is made
            assert fast.SerializeToString() == fresh.SerializeToString()
            # A copy: changing an entry changes none of the messages made once.
            if fast.HasField("card_played"):
                fast.card_played.card.rank = 99
            if fast.HasField("trick_won"):
                fast.trick_won.cards[0].rank = 99


@pytest.mark.parametrize("card", [*range(52), *JOKERS, *range(64, 112)])
def test_cards_round_trip(card: int) -> None:
    assert codec.card_from_pb(codec.card_to_pb(card)) == card


@pytest.mark.parametrize(
    "action", [0, 51, 52, 64, 111, PASS, exclude(0), exclude(3), choose_trump(2)]
)
def test_actions_round_trip(action: int) -> None:
    assert codec.action_from_pb(codec.action_to_pb(action)) == action


@pytest.mark.parametrize(
    "bad",
    [
        pb.Action(),
        pb.Action(play=pb.Card(suit=pb.SUIT_CLUBS, rank=1)),
        pb.Action(play=pb.Card(suit=pb.SUIT_OROS, rank=13)),
        pb.Action(play=pb.Card(suit=pb.SUIT_UNSPECIFIED, rank=5)),
        pb.Action(play=pb.Card(suit=pb.SUIT_JOKER, rank=4)),
        pb.Action(exclude_suit=pb.SUIT_OROS),
        pb.Action(choose_trump=pb.SUIT_UNSPECIFIED),
    ],
)
def test_nonsense_actions_are_refused(bad: pb.Action) -> None:
    with pytest.raises(ValueError):
        codec.action_from_pb(bad)


def test_codes_are_informative_only() -> None:
    card = pb.Card(suit=pb.SUIT_HEARTS, rank=12, code="nonsense")
    assert codec.card_from_pb(card) == french(2, 12)
    assert codec.card_to_pb(spanish(4, 6)).code == "6O"


def test_projection_hides_other_hands_and_private_pass_reasons() -> None:
    log = new_match("hexathlon", players=4, seed=bytes(32)).log
    dealt = next(codec.event_to_pb(e, 3, "m") for e in log if type(e).__name__ == "Dealt")
    mine = codec.project_pb(dealt, 1, voluntary_pass=False)
    assert [h.hidden for h in mine.dealt.hands] == [True, False, True, True]
    assert all(not h.cards for i, h in enumerate(mine.dealt.hands) if i != 1)
    assert [h.size for h in mine.dealt.hands] == [13, 13, 13, 13]
    spectator = codec.project_pb(dealt, None, voluntary_pass=False)
    assert all(h.hidden and not h.cards for h in spectator.dealt.hands)
    assert not any(h.hidden for h in dealt.dealt.hands), "projection copies, never mutates"
    forced = pb.Event(seq=9, passed=pb.Passed(seat=2, reason=pb.PASS_REASON_FORCED))
    assert codec.project_pb(forced, 0, voluntary_pass=True).passed.reason == pb.PASS_REASON_HIDDEN
    assert codec.project_pb(forced, 0, voluntary_pass=False).passed.reason == pb.PASS_REASON_FORCED


def test_every_event_kind_is_the_engine_s_or_the_server_s() -> None:
    """Nothing that enumerates kinds may miss one: a kind is either produced by the engine's
    events or one of the server's own (MatchCancelled included), which decode to ``None``."""
    kinds = {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    engine_kinds = set()
    for game, players in GAME_PLAYERS:
        log = play_out(
            new_match(game, players=players, seed=bytes(32), options={"first_dealer": "random"})
        )
        engine_kinds |= {codec.event_to_pb(e, 1, "m").WhichOneof("kind") for e in log}
    assert engine_kinds | codec.SERVER_KINDS == kinds
    assert not engine_kinds & codec.SERVER_KINDS
    for kind in codec.SERVER_KINDS:
        event = pb.Event(seq=7)
        getattr(event, kind).SetInParent()
        assert codec.event_from_pb(event) is None, kind


def test_a_cancellation_decodes_to_no_engine_event_and_every_reader_sees_it_whole() -> None:
    cancelled = pb.Event(
        seq=40, match_cancelled=pb.MatchCancelled(reason="cancelled by the operator")
    )
    assert codec.event_from_pb(cancelled) is None
    for seat in (None, 0, 3):
        for voluntary_pass in (False, True):
            assert codec.project_pb(cancelled, seat, voluntary_pass=voluntary_pass) == cancelled


def test_match_started_carries_the_settings_the_rules_do_not_know() -> None:
    started = new_match("crazy_sixes", players=3, seed=bytes(32)).log[0]
    wire = codec.event_to_pb(started, 1, "m", move_ms=1500, reserved_seats=[False, True, False])
    assert wire.match_started.move_ms == 1500
    assert list(wire.match_started.reserved_seats) == [False, True, False]
    assert codec.event_from_pb(pb.Event.FromString(wire.SerializeToString())) == started
    seen = codec.project_pb(wire, None, voluntary_pass=False)
    assert seen.match_started.move_ms == 1500 and list(seen.match_started.reserved_seats)[1]
    plain = codec.event_to_pb(started, 1, "m")
    assert plain.match_started.move_ms == 0 and not plain.match_started.reserved_seats
