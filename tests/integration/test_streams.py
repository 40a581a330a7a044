"""Event streams on a real server: gap-free replay then live events, resume, what a spectator
may see, the end of a match and its seed, and the per-move clock."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cardarena.engine import Projector
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import (
    LAST,
    RPC_TIMEOUT,
    STREAM_TIMEOUT,
    Feed,
    act,
    act_times,
    action_of_event,
    auth,
    create,
    join_all,
    new_table,
    play_out,
    same_action,
    seat_feed,
    snapshot_of,
    watch_feed,
    with_api,
)
from ..serverproc import ServerProcess, log_records

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration


async def match_log(api: MatchServiceAsyncStub, match_id: str) -> list[pb.Event]:
    log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=RPC_TIMEOUT)
    return [pb.Event.FromString(e.event) for e in log.entries]


def seqs(events: list[pb.Event]) -> list[int]:
    return [e.seq for e in events]


def hidden_everywhere_but(hands: list[pb.Hand], seat: int | None) -> None:
    """Every hand but ``seat``'s is hidden and carries no card; ``seat``'s shows its cards."""
    for index, hand in enumerate(hands):
        if index == seat:
            assert not hand.hidden and len(hand.cards) == hand.size, (index, hand)
        else:
            assert hand.hidden and not hand.cards, (index, hand)


def test_seat_stream_replays_gap_free_goes_live_and_ends_with_the_seed(
    server: ServerProcess,
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        table = await new_table(api)  # the server draws the seed
        stored = await act_times(api, table, 6)
        feed = seat_feed(api, table.match_id, 0, table.tokens[0], after_seq=0)
        snap = await feed.snapshot()
        assert snap.seq == stored and snap.viewer_seat == 0
        assert snap.seed_commitment == table.commitment
        replayed = await feed.events_through(stored)
        assert seqs(replayed) == list(range(1, stored + 1))
        assert replayed[0].match_started.seed_commitment == table.commitment
        # live: the other seats (and seat 0 when its turn comes) play the match out
        played, live = await asyncio.gather(play_out(api, table), feed.rest())
        assert played > 0 and live, "the stream carried live events"
        events = replayed + live
        info = (await api.GetMatch(spb.GetMatchRequest(match_id=table.match_id), timeout=10)).match
        assert info.status == spb.MATCH_STATUS_ENDED
        assert seqs(events) == list(range(1, info.last_seq + 1)), "gap-free and in order"
        assert events[-2].WhichOneof("kind") == "match_ended"
        assert events[-1].WhichOneof("kind") == "seed_revealed"
        seed = events[-1].seed_revealed.seed
        assert len(seed) == 32 and seed == info.seed
        assert hashlib.sha256(b"cardarena-seed-v1" + seed).hexdigest() == table.commitment
        # the stream is the log as seat 0 may see it
        log = await match_log(api, table.match_id)
        assert len(log) == len(events)
        projector = Projector(0)  # its Jokers under its own numbers (test_joker_names)
        for mine, stored_event in zip(events, log, strict=True):
            event = codec.event_from_pb(stored_event)
            shown = projector.project(event) if event is not None else None
            if stored_event.WhichOneof("kind") == "dealt":
                hidden_everywhere_but(list(mine.dealt.hands), 0)
                assert codec.event_from_pb(mine) == shown
            elif shown != event:
                assert codec.event_from_pb(mine) == shown
            else:
                assert mine == stored_event
        # a stream opened on the ended match: snapshot, the log, then a normal end
        late = seat_feed(api, table.match_id, 1, table.tokens[1], after_seq=0)
        final = await late.snapshot()
        assert final.over and final.seq == info.last_seq
        assert seqs(await late.rest()) == seqs(events)

    with_api(server.address, scenario)


def test_resuming_after_seq_k_yields_exactly_k_plus_one_on(server: ServerProcess) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        table = await new_table(api)
        last = await act_times(api, table, 8)
        resumes = sorted({0, 1, 2, last // 2, last - 1, last})
        feeds: list[tuple[int, Feed]] = []
        for i, k in enumerate(resumes):  # spectators unbatched and batched
            feeds.append((k, seat_feed(api, table.match_id, 2, table.tokens[2], after_seq=k)))
            feeds.append((k, watch_feed(api, table.match_id, after_seq=k, batched=i > 0)))
        for k, feed in feeds:
            snap = await feed.snapshot()
            assert snap.seq == last
            if k < last:
                assert seqs(await feed.events_through(last)) == list(range(k + 1, last + 1))
        done = await act(api, table)
        assert done is not None and done.first_seq == last + 1
        for k, feed in feeds:
            nxt = await feed.event()
            assert nxt.seq == last + 1, (k, nxt)
            feed.cancel()

    with_api(server.address, scenario)


def test_a_spectator_never_sees_a_hidden_card_and_a_seat_sees_only_its_own(
    server: ServerProcess,
) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        table = await new_table(api, "pentathlon", 3, rounds=["pass", "fan_tan"])
        watcher = watch_feed(api, table.match_id)
        seats = [seat_feed(api, table.match_id, s, t) for s, t in enumerate(table.tokens)]
        spectator_snap = await watcher.snapshot()
        assert not spectator_snap.HasField("viewer_seat")
        assert not spectator_snap.legal_actions
        hidden_everywhere_but(list(spectator_snap.hands), None)
        for seat, feed in enumerate(seats):
            snap = await feed.snapshot()
            assert snap.viewer_seat == seat
            hidden_everywhere_but(list(snap.hands), seat)
        # halfway through, fresh snapshots still hide what they must
        await act_times(api, table, 20)
        hidden_everywhere_but(list((await snapshot_of(api, table.match_id)).hands), None)
        for seat, token in enumerate(table.tokens):
            snap = await snapshot_of(api, table.match_id, seat, token)
            hidden_everywhere_but(list(snap.hands), seat)
        watching = asyncio.ensure_future(watcher.rest())
        seeing = [asyncio.ensure_future(f.rest()) for f in seats]
        await asyncio.gather(play_out(api, table), watching, *seeing)
        watched, seen = watching.result(), [s.result() for s in seeing]
        log = await match_log(api, table.match_id)
        deals = [e for e in log if e.WhichOneof("kind") == "dealt"]
        assert len(deals) == 2
        assert len(watched) == len(log)
        for reader, events in [(None, watched), *enumerate(seen)]:
            assert seqs(events) == seqs(log)
            dealt = [e for e in events if e.WhichOneof("kind") == "dealt"]
            assert len(dealt) == len(deals)
            for projected, stored in zip(dealt, deals, strict=True):
                hidden_everywhere_but(list(projected.dealt.hands), reader)
                assert [h.size for h in projected.dealt.hands] == [
                    len(h.cards) for h in stored.dealt.hands
                ]
                if reader is not None:
                    assert projected.dealt.hands[reader] == stored.dealt.hands[reader]

    with_api(server.address, scenario)


def test_the_clock_plays_the_lowest_legal_action_for_a_seat_that_does_not_act(
    server: ServerProcess,
) -> None:
    observations = 5

    async def scenario(api: MatchServiceAsyncStub) -> None:
        info = await create(api, "triathlon", 3, move_ms=200, max_deals=1)
        match_id = info.match_id
        watcher = watch_feed(api, match_id)
        opening = (await watcher.snapshot()).seq
        assert seqs(await watcher.events_through(opening)) == list(range(1, opening + 1))
        tokens = await join_all(api, match_id, 3)
        started = time.monotonic()
        # what the seat to act could have played, seen atomically in its own snapshot
        expected: dict[int, tuple[int, pb.Action]] = {}
        events: list[pb.Event] = []
        while len(expected) < observations:
            assert time.monotonic() - started < 15, "the clock does not advance the match"
            spectator = await snapshot_of(api, match_id)
            seat = spectator.to_act
            snap = await snapshot_of(api, match_id, seat, tokens[seat])
            if snap.HasField("to_act") and snap.to_act == seat and snap.legal_actions:
                now_ms = time.time() * 1000
                assert now_ms - 3000 < snap.deadline_unix_ms <= now_ms + 200 + 1000, snap
                expected[snap.seq] = (seat, snap.legal_actions[0])
                # wait for the clock to play it before looking again
                while not events or events[-1].seq < snap.seq + 2:
                    events.append(await watcher.event(5))
        watcher.cancel()
        by_seq = {e.seq: e for e in events}
        for seq, (seat, lowest) in expected.items():
            timed_out, acted = by_seq[seq + 1], by_seq[seq + 2]
            assert timed_out.WhichOneof("kind") == "timed_out", timed_out
            assert timed_out.timed_out.seat == seat
            recorded = action_of_event(acted)
            assert recorded is not None, acted
            assert recorded[0] == seat and same_action(recorded[1], lowest), (acted, lowest)
        # nobody acted: every action after the joins follows its seat's TimedOut
        previous: pb.Event | None = None
        for event in events:
            recorded = action_of_event(event)
            if recorded is not None:
                assert previous is not None and previous.WhichOneof("kind") == "timed_out"
                assert previous.timed_out.seat == recorded[0]
            previous = event
        later = (await api.GetMatch(spb.GetMatchRequest(match_id=match_id), timeout=10)).match
        assert later.last_seq >= max(expected) + 2
        logged = [
            r
            for r in log_records(server.stderr_path)
            if r["event"] == "timed_out" and r.get("match_id") == match_id
        ]
        assert len(logged) >= observations

    with_api(server.address, scenario)


def test_a_match_without_clock_waits_for_its_seats(server: ServerProcess) -> None:
    async def scenario(api: MatchServiceAsyncStub) -> None:
        table = await new_table(api)
        before = await snapshot_of(api, table.match_id)
        assert before.deadline_unix_ms == 0
        # Not a sleep but a clock that runs: a twin seated after it, on a 50 ms clock, whose
        # eight time-outs take at least 0.4 s, in which the first match's seats do nothing.
        twin = await new_table(api, move_ms=50, max_deals=1)
        watch = watch_feed(api, twin.match_id, after_seq=LAST)
        await watch.snapshot()
        for _ in range(8):
            while (await watch.event()).WhichOneof("kind") != "timed_out":
                pass
        watch.cancel()
        after = await snapshot_of(api, table.match_id)
        assert after.seq == before.seq

    with_api(server.address, scenario)


def test_a_timed_out_seat_is_not_prompted_for_the_turn_it_has_lost(server: ServerProcess) -> None:
    """Regression: the TimedOut entry used to be published alone, and the late seat got a
    YourTurn for it (stale on arrival, with a false deadline) before its default action."""
    timeouts = 4

    async def scenario(api: MatchServiceAsyncStub) -> None:
        info = await create(api, "triathlon", 3, move_ms=200, max_deals=1)
        match_id = info.match_id
        joined = [
            await api.JoinMatch(
                spb.JoinMatchRequest(match_id=match_id, seat=seat), timeout=RPC_TIMEOUT
            )
            for seat in (0, 1)
        ]
        calls = [
            api.StreamEvents(
                spb.StreamEventsRequest(match_id=match_id, seat=seat, after_seq=LAST),
                metadata=auth(j.token),
                timeout=STREAM_TIMEOUT,
            )
            for seat, j in enumerate(joined)
        ]
        for call in calls:
            first = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
            assert isinstance(first, spb.StreamEventsResponse) and first.HasField("snapshot")
        await api.JoinMatch(spb.JoinMatchRequest(match_id=match_id, seat=2), timeout=10)
        events: dict[int, pb.Event] = {}
        prompts: list[tuple[int, int]] = []  # (seat, seq)

        async def read(seat: int, call: grpc.aio.UnaryStreamCall[Any, Any]) -> None:
            while sum(e.HasField("timed_out") for e in events.values()) < timeouts:
                message = await asyncio.wait_for(call.read(), RPC_TIMEOUT)
                assert isinstance(message, spb.StreamEventsResponse), message
                if message.HasField("event"):
                    events[message.event.seq] = message.event
                elif message.WhichOneof("kind") == "your_turn":
                    prompts.append((seat, message.your_turn.seq))
            call.cancel()

        await asyncio.gather(*(read(seat, call) for seat, call in enumerate(calls)))
        assert prompts
        for seat, seq in prompts:
            at = events.get(seq)
            assert at is None or not at.HasField("timed_out"), (
                f"seat {seat} prompted at seq {seq}, its own TimedOut"
            )

    with_api(server.address, scenario)
