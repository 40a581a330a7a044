"""The server shows no reader its own numbers for Triathlon's Jokers while a match is live.

The engine numbers the three interchangeable Jokers so that a deal names each card once, and
a seat plays the lowest it holds: shown as they are, a first Joker played numbered 2 or 3
told every reader that its player held no Joker 1, and so that an unseen Joker 1 sat in the
third hand. Each reader sees them under its own numbers (docs/rules.md §3.3), made of what
it has seen; ``tests/engine/test_joker_names.py`` proves that numbering tells nothing. Here:
every path the server sends cards by (a live stream, a stream resumed mid-deal, the
snapshot, SubmitAction's answer) shows each reader exactly the engine's projection for it,
and the first Joker played shows everyone as Joker 1 where the engine's number is not.
In-process server on 127.0.0.1:0.
"""

from __future__ import annotations

from pathlib import Path

from cardarena.engine import SPECTATOR, Projector, setup, view
from cardarena.engine.cards import JOKERS
from cardarena.engine.events import CardPlayed
from cardarena.engine.views import Viewer
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import auth, run, seat_feed, snapshot_of, watch_feed
from .support import channel_to, create_table, hosted_turn, play_lowest, served

OPTIONS = {"max_deals": 3}


def first_joker_not_numbered_one() -> tuple[bytes, int]:
    """A seed whose Triathlon, played lowest-legal-first (as ``play_lowest``), has
    a first Joker numbered 2 or 3 by the engine; and how many actions come before it."""
    for attempt in range(500):
        seed = bytes([attempt % 256, attempt // 256]) * 16
        match = setup("triathlon", players=3, options=OPTIONS).start(seed)
        actions = 0
        while not match.over:
            seat = match.to_act
            assert seat is not None
            events = match.apply(seat, match.legal_actions()[0])
            played = [e.card for e in events if isinstance(e, CardPlayed) and e.card in JOKERS]
            if played:
                if played[0] != JOKERS[0]:
                    return seed, actions
                break
            actions += 1
    raise AssertionError("no seed found")


def engine_projection(stored: list[pb.Event], viewer: Viewer) -> list[object]:
    """The stored log as the engine's Projector shows it to ``viewer`` (server entries
    the rules know nothing of left out)."""
    projector = Projector(viewer)
    return [
        projector.project(event)
        for entry in stored
        if (event := codec.event_from_pb(entry)) is not None
    ]


def as_engine(events: list[pb.Event]) -> list[object]:
    return [event for entry in events if (event := codec.event_from_pb(entry)) is not None]


def test_every_path_shows_each_reader_its_own_joker_numbers(data_dir: Path) -> None:
    seed, before_joker = first_joker_not_numbered_one()

    async def scenario() -> None:
        async with (
            served(data_dir) as server,
            channel_to(f"127.0.0.1:{server.port}") as (_, api),
        ):
            table = await create_table(api, seed=seed, options=OPTIONS)
            hosted = server.arena.matches[table.match_id]
            seats = [seat_feed(api, table.match_id, s, table.tokens[s]) for s in range(3)]
            watcher = watch_feed(api, table.match_id)
            for _ in range(before_joker):
                await play_lowest(server, api, table)
            # The first Joker, over SubmitAction (its answer is checked below).
            seat, seq, legal = hosted_turn(server, table.match_id)
            answer = await api.SubmitAction(
                spb.SubmitActionRequest(
                    match_id=table.match_id,
                    seat=seat,
                    action=codec.action_to_pb(legal[0]),
                    expected_seq=seq,
                    request_id="first-joker",
                ),
                metadata=auth(table.tokens[seat]),
            )
            # Each reader's snapshot now, against the engine's view for it.
            for reader in (*range(3), None):
                token = table.tokens[reader] if reader is not None else ""
                snap = await snapshot_of(api, table.match_id, reader, token)
                seen = view(hosted.engine, SPECTATOR if reader is None else reader)
                assert [codec.card_from_pb(c) for c in snap.trick.cards] == list(seen.trick)
                taken = [[codec.card_from_pb(c) for c in t.cards] for t in snap.taken]
                assert taken == [list(t) for t in seen.taken]
                if reader is not None:
                    own = seen.hands[reader]
                    assert own is not None
                    hand = snap.hands[reader].cards
                    assert [codec.card_from_pb(c) for c in hand] == list(own)
            # A seat's stream resumed mid-deal, right after the first Joker.
            resumed = seat_feed(api, table.match_id, 0, table.tokens[0], answer.events[-1].seq)
            while not hosted.ended:
                await play_lowest(server, api, table)
            stored = [pb.Event.FromString(i.payload) for i in await hosted.read_log(after_seq=0)]
            last = stored[-1].seq
            assert sum(e.HasField("dealt") for e in stored) > 1, "one deal: no boundary crossed"
            for feed in (*seats, watcher, resumed):
                await feed.snapshot()  # then the history after after_seq, then live events
            spectator = await watcher.events_through(last)
            first = next(
                e
                for e in spectator
                if e.WhichOneof("kind") == "card_played"
                and e.card_played.card.suit == pb.SUIT_JOKER
            )
            assert first.card_played.card.rank == 1, "the first Joker played is everyone's 1"
            stored_first = next(e for e in stored if e.seq == first.seq)
            assert stored_first.card_played.card.rank != 1, "the engine numbered it otherwise"
            assert as_engine(spectator) == engine_projection(stored, SPECTATOR)
            streamed = [await feed.events_through(last) for feed in seats]
            for s in range(3):
                assert as_engine(streamed[s]) == engine_projection(stored, s)
            by_seq = {e.seq: e for e in streamed[seat]}
            assert list(answer.events) == [by_seq[e.seq] for e in answer.events]
            tail = await resumed.events_through(last)
            assert tail == [e for e in streamed[0] if e.seq > answer.events[-1].seq]
            for feed in (*seats, watcher, resumed):
                feed.cancel()

    run(scenario(), seconds=60)
