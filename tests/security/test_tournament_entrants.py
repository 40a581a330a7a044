"""Entrants, cancellers and watchers of a hosted tournament, played by hostile clients.

Enter takes only this tournament's entrant keys (not another tournament's, not one of a
tournament that ended, not the creator secret), and the seat token it hands out opens that
seat of that match and nothing else. An entrant may connect many times without faulting its
seats, and a stream that stops reading is dropped, not queued without bound. Only the
operator or the creator cancels, and then every running match ends with a logged
MatchCancelled. A watcher that stops reading sees the latest state, not every one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest

from cardarena.server.tournaments.entrants import LINK_QUEUE, MAX_LINKS
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth
from ..waiting import eventually
from .support import code_of, failure, hosted_turn, secret
from .test_streams_bounded import NOT_READING, read_to_end
from .tournaments import (
    apis,
    director_of,
    end_oldest,
    enter,
    host,
    settled,
    stream_failure,
    watched,
    with_tournaments,
)

if TYPE_CHECKING:
    from cardarena.server.app import Server
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED


def test_enter_takes_only_this_tournaments_keys(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        one = await host(tapi)
        two = await host(tapi)
        gone = await host(tapi)
        await settled(server, gone.tournament_id)
        cancel = tpb.CancelTournamentRequest(tournament_id=gone.tournament_id)
        await tapi.CancelTournament(cancel, metadata=auth(gone.creator), timeout=30)
        tid = one.tournament_id

        def call(tournament_id: str, metadata: tuple[tuple[str, str], ...]) -> object:
            return tapi.Enter(
                tpb.EnterRequest(tournament_id=tournament_id), metadata=metadata, timeout=RPC
            )

        offered = [
            ((), UNAUTHENTICATED),
            ((("authorization", one.keys[0]),), UNAUTHENTICATED),  # no "Bearer "
            ((("authorization", "Bearer"),), UNAUTHENTICATED),
            (auth(""), UNAUTHENTICATED),
            (auth(secret()), UNAUTHENTICATED),
            (auth(two.keys[0]), UNAUTHENTICATED),  # another tournament's
            (auth(gone.keys[0]), UNAUTHENTICATED),  # one of a tournament that ended
            (auth(one.creator), UNAUTHENTICATED),  # the creator is no entrant
            (auth(one.keys[0][:-1]), UNAUTHENTICATED),
            (auth(one.keys[0] + " "), UNAUTHENTICATED),
        ]
        for metadata, expected in offered:
            error = await stream_failure(call(tid, metadata))
            assert error.code() == expected, (metadata, error)
            for key in (*one.keys, *two.keys, one.creator):
                assert key not in (error.details() or "")
        for unknown in ("0123456789abcdef", "", "x" * 3000):
            error = await stream_failure(call(unknown, auth(one.keys[0])))
            assert error.code() == grpc.StatusCode.NOT_FOUND, unknown
        assert not any(director_of(server, tid).links.by_entrant), "a refused stream counts"

        # The key of an ended tournament: who it is and that it ended, no seat, no token.
        late = enter(tapi, gone.tournament_id, gone.keys[1])
        await late.rest()
        assert late.entered is not None and late.entered.entrant == "b"
        assert late.ended is not None and late.ended.cancelled
        assert not late.matches

    with_tournaments(data_dir, scenario)


def test_a_seat_token_opens_its_seat_of_its_match_and_nothing_else(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, api: MatchServiceAsyncStub
    ) -> None:
        hosted = await host(tapi)  # three entrants, three rotations, all running at once
        entries = [enter(tapi, hosted.tournament_id, key) for key in hosted.keys]
        for entry, name in zip(entries, "abc", strict=True):
            for assigned in await entry.until_matches(3):
                assert assigned.names[assigned.seat] == name, "told of another's seat"
        ours = {(m.match_id, m.seat): m.token for e in entries for m in e.seats()}
        assert len(ours) == 9 and len(set(ours.values())) == 9
        match_ids = sorted({m for m, _ in ours})
        mine = entries[0].seats()[0]
        other_match = next(m for m in match_ids if m != mine.match_id)
        other_seat = (mine.seat + 1) % 3

        def stream(match_id: str, seat: int, token: str) -> object:
            return api.StreamEvents(
                spb.StreamEventsRequest(match_id=match_id, seat=seat),
                metadata=auth(token),
                timeout=RPC,
            )

        call = api.StreamEvents(
            spb.StreamEventsRequest(match_id=mine.match_id, seat=mine.seat),
            metadata=auth(mine.token),
            timeout=RPC,
        )
        first = await asyncio.wait_for(call.read(), RPC)
        assert isinstance(first, spb.StreamEventsResponse)
        assert first.snapshot.viewer_seat == mine.seat
        call.cancel()
        assert (await stream_failure(stream(mine.match_id, other_seat, mine.token))).code() == (
            DENIED
        )
        for seat in range(3):
            error = await stream_failure(stream(other_match, seat, mine.token))
            assert error.code() in (UNAUTHENTICATED, DENIED), (seat, error)
            assert (await stream_failure(stream(mine.match_id, seat, hosted.keys[0]))).code() == (
                UNAUTHENTICATED
            )
        seat, seq, legal = hosted_turn(server, mine.match_id)
        before = server.arena.matches[mine.match_id].last_seq
        for token, on_seat in (
            (mine.token, seat),
            (hosted.keys[0], seat),
            (hosted.creator, seat),
        ):
            if token == ours[mine.match_id, seat]:
                continue
            submit = spb.SubmitActionRequest(
                match_id=mine.match_id,
                seat=on_seat,
                action=codec.action_to_pb(legal[0]),
                expected_seq=seq,
            )
            assert await code_of(api.SubmitAction(submit, metadata=auth(token))) in (
                UNAUTHENTICATED,
                DENIED,
            )
        # Nobody else takes, cancels or plays a seat of a tournament's match.
        for seat in range(3):
            for join_secret in ("", secret()):
                join = spb.JoinMatchRequest(
                    match_id=mine.match_id, seat=seat, name="stranger", join_secret=join_secret
                )
                assert await code_of(api.JoinMatch(join, timeout=RPC)) in (
                    DENIED,
                    grpc.StatusCode.ALREADY_EXISTS,
                )
        join = spb.JoinMatchRequest(match_id=mine.match_id, name="stranger")
        assert await code_of(api.JoinMatch(join, timeout=RPC)) in (
            DENIED,
            grpc.StatusCode.ALREADY_EXISTS,
            grpc.StatusCode.FAILED_PRECONDITION,
        )
        for credential in (mine.token, hosted.keys[0], hosted.creator):
            request = spb.CancelMatchRequest(match_id=mine.match_id, reason="mine now")
            assert await code_of(api.CancelMatch(request, metadata=auth(credential))) == DENIED
        play = api.Play(metadata=auth(mine.token), timeout=RPC)
        await play.write(spb.PlayRequest(open=spb.PlayOpen(match_id=other_match, seat=mine.seat)))
        assert (await stream_failure(play)).code() in (UNAUTHENTICATED, DENIED)
        hosted_match = server.arena.matches[mine.match_id]
        assert hosted_match.last_seq == before and hosted_match.running
        assert [s.name for s in hosted_match.seats] == list(mine.names)
        for entry in entries:
            entry.cancel()

    with_tournaments(data_dir, scenario)


def test_an_entrant_connecting_many_times_faults_nothing_until_its_last_stream_goes(
    data_dir: Path,
) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        hosted = await host(tapi)
        director = director_of(server, hosted.tournament_id)
        others = [enter(tapi, hosted.tournament_id, key) for key in hosted.keys[1:]]
        for other in others:
            await other.until_matches(3)
        streams = [enter(tapi, hosted.tournament_id, hosted.keys[0]) for _ in range(MAX_LINKS)]
        for stream in streams:
            await stream.until_matches(3)
            assert stream.entered is not None and stream.entered.entrant == "a"
        one_too_many = enter(tapi, hosted.tournament_id, hosted.keys[0])
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await one_too_many.until_matches(1)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        tokens = {tuple(sorted((m.match_id, m.seat, m.token) for m in s.seats())) for s in streams}
        assert len(tokens) == 1, "each stream of one entrant is told the same seats"
        await eventually(lambda: len(director.links.by_entrant[0]) == MAX_LINKS, what="every link")
        seqs = {m: h.last_seq for m, h in server.arena.matches.items()}
        for stream in streams[1:]:
            stream.cancel()
        await eventually(lambda: len(director.links.by_entrant[0]) == 1, what="all but one gone")
        # One stream is still there: no seat of the entrant faulted.
        assert {m: h.last_seq for m, h in server.arena.matches.items()} == seqs
        streams[0].cancel()
        await eventually(lambda: not director.links.by_entrant[0], what="the last gone")

        def faulted() -> bool:
            return all(
                hosted_match.faults.counts[m.seat] == 1
                for hosted_match in server.arena.matches.values()
                for m in streams[0].seats()
                if m.match_id == hosted_match.match_id
            )

        await eventually(faulted, what="one disconnect fault per seat of the entrant")
        for hosted_match in server.arena.matches.values():
            others_seats = [s for s, n in enumerate(hosted_match.seats) if n.name != "a"]
            assert all(hosted_match.faults.counts[s] == 0 for s in others_seats)
        for other in others:
            other.cancel()

    with_tournaments(data_dir, scenario)


def test_an_entrant_that_stops_reading_is_dropped_not_queued(data_dir: Path) -> None:
    """An entrant connects over a channel that takes in ~1 KiB and never reads, while more
    matches start than its stream may hold: it is dropped (UNAVAILABLE when it reads again,
    with a few messages first), the server keeps nothing more for it, and an entrant that
    reads is told of every match."""

    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        planned = 3 * 100
        hosted = await host(tapi, deals=100, concurrency=LINK_QUEUE)
        director = director_of(server, hosted.tournament_id)
        reader = enter(tapi, hosted.tournament_id, hosted.keys[1])
        async with apis(server, NOT_READING) as (_, _slow_api, slow):
            stalled = slow.Enter(
                tpb.EnterRequest(tournament_id=hosted.tournament_id),
                metadata=auth(hosted.keys[0]),
                timeout=60,
            )
            first = await asyncio.wait_for(stalled.read(), RPC)
            assert isinstance(first, tpb.EnterResponse) and first.HasField("entered")
            await reader.until_matches(LINK_QUEUE)
            link = next(iter(director.links.by_entrant[0]))
            # End matches one by one (as their players would): each ended one starts the
            # next, which is told to every entrant.
            while director.next_index < planned:
                await end_oldest(server, director)
                assert link.queue.qsize() <= LINK_QUEUE
            await reader.until_matches(planned)
            assert link.dropped, "a stream that does not read was kept"
            assert link.queue.qsize() <= 1, "a dropped stream still holds its messages"
            got, code = await read_to_end(stalled)
            assert code == grpc.StatusCode.UNAVAILABLE, (got, code)
            assert got < LINK_QUEUE // 4, f"{got} messages kept for a stream that did not read"
        await eventually(lambda: not director.links.by_entrant[0], what="the link forgotten")
        assert len(director.links.by_entrant[1]) == 1, "the reading entrant was dropped"
        reader.cancel()

    with_tournaments(data_dir, scenario, 60)


def test_only_the_operator_or_the_creator_cancels_and_every_running_match_logs_it(
    data_dir: Path,
) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, api: MatchServiceAsyncStub
    ) -> None:
        target = await host(tapi, deals=2, concurrency=4)
        bystander = await host(tapi)
        nameless = await host(tapi, creator_secret="")
        entries = [enter(tapi, target.tournament_id, key) for key in target.keys]
        assignments = [await e.until_matches(4) for e in entries]
        seat_token = assignments[0][0].token
        director = director_of(server, target.tournament_id)

        def cancel(
            tournament_id: str, metadata: tuple[tuple[str, str], ...], reason: str = "x"
        ) -> Awaitable[tpb.CancelTournamentResponse]:
            return tapi.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id=tournament_id, reason=reason),
                metadata=metadata,
                timeout=30,
            )

        tid = target.tournament_id
        for metadata, expected in (
            ((), UNAUTHENTICATED),
            ((("authorization", target.creator),), UNAUTHENTICATED),
            (auth(secret()), DENIED),
            (auth(target.keys[0]), DENIED),  # an entrant
            (auth(seat_token), DENIED),  # a seat of one of its matches
            (auth(bystander.creator), DENIED),  # another tournament's creator
            (auth(target.creator[:-1]), DENIED),
        ):
            error = await failure(cancel(tid, metadata))
            assert error.code() == expected, (metadata, error)
            assert target.creator not in (error.details() or "")
        for reason, field in (("r" * 201, "reason"), ("bad\x00reason", "reason")):
            error = await failure(cancel(tid, auth(target.creator), reason))
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert field in (error.details() or "")
        unknown = await failure(cancel("0123456789abcdef", auth(target.creator)))
        assert unknown.code() == grpc.StatusCode.NOT_FOUND
        # A bad reason is refused before the tournament is even looked up.
        unknown = await failure(cancel("0123456789abcdef", auth(target.creator), "r" * 201))
        assert unknown.code() == grpc.StatusCode.INVALID_ARGUMENT
        # A tournament created without a creator secret: no secret cancels it.
        for made_up in (secret(), ""):
            assert await code_of(cancel(nameless.tournament_id, auth(made_up))) == DENIED
        assert not director.ended and not director.cancelled
        running = {director.match_ids[i] for i in director.running}
        assert len(running) == 4
        for match_id in running:
            assert server.arena.matches[match_id].running

        done = await asyncio.wait_for(
            tapi.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id=tid, reason="enough"),
                metadata=auth(target.creator),
                timeout=30,
            ),
            30,
        )
        info = done.tournament
        assert info.status == tpb.TOURNAMENT_STATUS_ENDED and info.cancelled
        assert "enough" in info.end_reason and info.started == 4
        for match_id in running:
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=RPC)
            kinds = [pb.Event.FromString(e.event) for e in log.entries]
            cancelled = [e.match_cancelled for e in kinds if e.HasField("match_cancelled")]
            assert len(cancelled) == 1 and "enough" in cancelled[0].reason, match_id
        for entry in entries:
            await entry.rest()
            assert entry.ended is not None and entry.ended.cancelled
        # Cancelling again, or by a stranger now, changes nothing.
        again = await cancel(tid, auth(target.creator))
        assert again.tournament.cancelled
        assert await code_of(cancel(tid, auth(secret()))) == DENIED
        for other in (bystander, nameless):
            still = director_of(server, other.tournament_id)
            assert not still.ended and len(still.running) == 3

    with_tournaments(data_dir, scenario)


def test_a_watcher_that_stops_reading_is_conflated_not_queued(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        hosted = await host(tapi, deals=20, concurrency=32)
        director = await settled(server, hosted.tournament_id)
        request = tpb.WatchTournamentRequest(tournament_id=hosted.tournament_id)
        follower = tapi.WatchTournament(request, timeout=60)
        async with apis(server, NOT_READING) as (_, _slow_api, slow):
            stalled = slow.WatchTournament(request, timeout=60)
            first = await asyncio.wait_for(stalled.read(), RPC)
            assert isinstance(first, tpb.WatchTournamentResponse)
            versions = director.version
            # Many changes: matches end (as by their players), more start, then it ends.
            for _ in range(30):
                await end_oldest(server, director)
            await settled(server, hosted.tournament_id)
            cancel = tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id)
            await tapi.CancelTournament(cancel, metadata=auth(hosted.creator), timeout=30)
            changes = director.version - versions
            assert changes >= 30
            got = await watched(stalled)
            assert await stalled.code() == grpc.StatusCode.OK
            assert len(got) <= changes // 4, f"{len(got)} of {changes} states were kept"
            assert not any(t.matches for t in got)
        seen = await watched(follower)
        for state in seen:
            assert not state.seed or state.status == (tpb.TOURNAMENT_STATUS_ENDED), (
                "the seed was shown before the end"
            )
        assert seen[-1].status == tpb.TOURNAMENT_STATUS_ENDED
        finished = [t.failed for t in seen]
        assert finished == sorted(finished)
        unknown = tapi.WatchTournament(tpb.WatchTournamentRequest(tournament_id="nope"))
        assert (await stream_failure(unknown)).code() == grpc.StatusCode.NOT_FOUND

    with_tournaments(data_dir, scenario, 60)


def test_a_slow_watcher_is_shown_how_the_tournament_ended(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> tpb.TournamentInfo:
        hosted = await host(tapi, deals=4, concurrency=12)
        await settled(server, hosted.tournament_id)
        request = tpb.WatchTournamentRequest(tournament_id=hosted.tournament_id)
        async with apis(server, NOT_READING) as (_, _slow_api, slow):
            stalled = slow.WatchTournament(request, timeout=60)
            assert isinstance(
                await asyncio.wait_for(stalled.read(), RPC), tpb.WatchTournamentResponse
            )
            cancel = tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id)
            await tapi.CancelTournament(cancel, metadata=auth(hosted.creator), timeout=30)
            states = await watched(stalled)
            last = states[-1] if states else None
            assert await stalled.code() == grpc.StatusCode.OK
            assert last is not None
            return last

    last = with_tournaments(data_dir, scenario)
    assert last.status == tpb.TOURNAMENT_STATUS_ENDED and last.cancelled, last.status
