"""What a tournament keeps from hostile clients: other seats' cards, refused actions, seeds,
keys and creator secrets; and the orders of calls that must not break it.

Hidden information is checked on the bytes as they were streamed (each seat's StreamEvents, a
spectator's WatchMatch, the entrants' Enter streams, WatchTournament), not on messages the
client library decoded: before a match ends nobody sees another seat's cards, a refused
action's ``action`` and ``detail`` reach only the seat that sent it, and no seed that deals a
running match is shown. Keys, creator secrets and seat tokens never reach the server's log.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import grpc

from cardarena.server.api import Access
from cardarena.server.hosting.arena import match_id_for
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import SERVICE, auth, run
from ..serverproc import ServerProcess
from ..waiting import eventually
from .support import channel_to, code_of, failure, hosted_turn, secret, served
from .tournaments import (
    TSERVICE,
    apis,
    create_request,
    director_of,
    enter,
    host,
    raw_stream,
    settled,
    stream_failure,
    tstub,
    with_tournaments,
)

if TYPE_CHECKING:
    from cardarena.server.app import Server
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub


def _hidden_hands(hands: Iterable[pb.Hand], seat: int | None) -> list[int]:
    """The seats other than ``seat`` whose cards are shown."""
    return [i for i, hand in enumerate(hands) if i != seat and len(hand.cards) > 0]


def test_nothing_streamed_before_the_end_shows_another_seats_cards_or_refused_action(
    data_dir: Path,
) -> None:
    """One tournament match played over SubmitAction with the tokens Enter hands out, one
    refused action on the way (a card the seat holds, sent when it may not play it), while
    every seat, a spectator, every entrant and a tournament watcher stream it as bytes. (The
    spectator is the operator: until its group has ended, nobody else may watch a match of
    it, test_group_embargo.py.)"""
    operator = secret()

    async def scenario() -> None:
        async with (
            served(data_dir, access=Access(operator_token=operator)) as server,
            apis(server) as (channel, api, tapi),
        ):
            # three rotations of one deal, all running at once
            hosted = await host(tapi, metadata=auth(operator))
            director = await settled(server, hosted.tournament_id)
            entries = [enter(tapi, hosted.tournament_id, key) for key in hosted.keys]
            tokens = {
                (m.match_id, m.seat): m.token for e in entries for m in await e.until_matches(3)
            }
            match_id = director.match_ids[0]
            others = [director.match_ids[i] for i in (1, 2)]
            match = server.arena.matches[match_id]
            group_seed = match.record.seed
            assert all(server.arena.matches[o].record.seed == group_seed for o in others)
            streams: dict[object, list[bytes]] = {}
            tasks = []
            for seat in range(3):
                sink: list[bytes] = []
                streams[seat] = sink
                request = spb.StreamEventsRequest(match_id=match_id, seat=seat)
                tasks.append(
                    asyncio.create_task(
                        raw_stream(
                            channel,
                            f"/{SERVICE}/StreamEvents",
                            request.SerializeToString(),
                            sink,
                            metadata=auth(tokens[match_id, seat]),
                        )
                    )
                )
            watched: list[bytes] = []
            streams[None] = watched
            watch = spb.WatchMatchRequest(match_id=match_id)
            tasks.append(
                asyncio.create_task(
                    raw_stream(
                        channel,
                        f"/{SERVICE}/WatchMatch",
                        watch.SerializeToString(),
                        watched,
                        metadata=auth(operator),
                    )
                )
            )
            public: list[bytes] = []  # what the tournament's watcher and the entrants get
            watch_t = tpb.WatchTournamentRequest(tournament_id=hosted.tournament_id)
            tasks.append(
                asyncio.create_task(
                    raw_stream(
                        channel, f"/{TSERVICE}/WatchTournament", watch_t.SerializeToString(), public
                    )
                )
            )
            for key in hosted.keys:
                request_e = tpb.EnterRequest(tournament_id=hosted.tournament_id)
                tasks.append(
                    asyncio.create_task(
                        raw_stream(
                            channel,
                            f"/{TSERVICE}/Enter",
                            request_e.SerializeToString(),
                            public,
                            metadata=auth(key),
                        )
                    )
                )

            refused: tuple[int, pb.Action] | None = None
            for _ in range(2000):
                if match.ended:
                    break
                seat, seq, legal = hosted_turn(server, match_id)
                if refused is None:
                    hand = match.snapshot(seat).hands[seat].cards
                    held = [
                        codec.action_to_pb(codec.action_from_pb(pb.Action(play=c))) for c in hand
                    ]
                    wrong = [a for a in held if codec.action_from_pb(a) not in legal]
                    if wrong:
                        submit = spb.SubmitActionRequest(
                            match_id=match_id, seat=seat, action=wrong[0], expected_seq=seq
                        )
                        code = await code_of(
                            api.SubmitAction(submit, metadata=auth(tokens[match_id, seat]))
                        )
                        assert code == grpc.StatusCode.FAILED_PRECONDITION
                        refused = (seat, wrong[0])
                        continue
                await api.SubmitAction(
                    spb.SubmitActionRequest(
                        match_id=match_id,
                        seat=seat,
                        action=codec.action_to_pb(legal[0]),
                        expected_seq=seq,
                        request_id=secrets.token_hex(8),
                    ),
                    metadata=auth(tokens[match_id, seat]),
                    timeout=RPC,
                )
            assert match.ended and refused is not None
            for task in tasks[:4]:  # the match's own streams end with it
                assert await asyncio.wait_for(task, RPC) == grpc.StatusCode.OK
            # While the other rotations of its deal run: its seed is nowhere, not even in
            # the streams of the match that ended, nor its log.
            assert all(server.arena.matches[o].running for o in others)
            everything = b"".join(b"".join(v) for v in streams.values()) + b"".join(public)
            assert group_seed not in everything, "a running match's seed was streamed"
            assert director.record.seed not in everything, "the tournament's seed was streamed"
            asked = spb.GetMatchRequest(match_id=match_id)
            info = (await api.GetMatch(asked, metadata=auth(operator))).match
            assert not info.seed
            log_refusal = await code_of(api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id)))
            assert log_refusal == grpc.StatusCode.FAILED_PRECONDITION
            got = await tapi.GetTournament(
                tpb.GetTournamentRequest(tournament_id=hosted.tournament_id, include_matches=True)
            )
            assert group_seed not in got.SerializeToString()
            assert director.record.seed not in got.SerializeToString()

            # Each reader's bytes, message by message.
            faulted_seat, action = refused
            full_fault: bytes = b""
            for reader, sink in streams.items():
                cls = spb.WatchMatchResponse if reader is None else spb.StreamEventsResponse
                viewer = reader if isinstance(reader, int) else None
                faults = []
                for raw in sink:
                    message = cls.FromString(raw)
                    kind = message.WhichOneof("kind")
                    if kind == "snapshot":
                        assert not _hidden_hands(list(message.snapshot.hands), viewer), reader
                    elif kind == "event":
                        event = message.event
                        if event.HasField("dealt"):
                            shown = _hidden_hands(list(event.dealt.hands), viewer)
                            assert not shown, (reader, shown)
                        if event.HasField("seat_faulted"):
                            faults.append(event)
                assert len(faults) == 1, (reader, faults)
                fault = faults[0].seat_faulted
                if viewer == faulted_seat:
                    assert fault.HasField("action") and fault.action == action
                    assert fault.detail
                    full_fault = faults[0].SerializeToString()
                else:
                    assert not fault.HasField("action") and not fault.detail, (reader, fault)
            assert full_fault
            for reader, sink in streams.items():
                if reader != faulted_seat:
                    assert full_fault not in b"".join(sink), reader
            assert full_fault not in b"".join(public)

            # Once the deal's last rotation has ended, its log is public, refusal and all.
            cancel = tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id)
            await tapi.CancelTournament(cancel, metadata=auth(hosted.creator), timeout=30)
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=RPC)
            logged = [pb.Event.FromString(e.event) for e in log.entries]
            assert [e.seat_faulted.action for e in logged if e.HasField("seat_faulted")] == [action]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    run(scenario())


def test_keys_and_creator_secrets_never_reach_the_servers_log(data_dir: Path) -> None:
    operator = secret()
    given = secret()
    creator = secret()
    offered: list[str] = []

    async def scenario(address: str) -> list[str]:
        async with channel_to(address) as (channel, _api):
            tapi = tstub(channel)
            seen = [given, creator, operator]
            # Refused creates carrying secrets: a bad key, a bad creator secret.
            for spoil in ("entrants", "creator_secret"):
                request = create_request(keys=[given, "", ""], creator_secret=creator)
                if spoil == "entrants":
                    bad = secret() + " " + secret()
                    request.entrants[1].key = bad
                else:
                    bad = secret() + "\t" + secret()
                    request.creator_secret = bad
                offered.append(bad.strip())
                error = await failure(tapi.CreateTournament(request, metadata=auth(operator)))
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert bad.strip() not in (error.details() or "")
            created = await tapi.CreateTournament(
                create_request(keys=[given, "", ""], creator_secret=creator),
                metadata=auth(operator),
                timeout=RPC,
            )
            tid = created.tournament.tournament_id
            drawn = [k for k in created.entrant_keys if k]
            assert len(drawn) == 2
            seen += drawn
            keys = [given, *drawn]
            entries = [enter(tapi, tid, key) for key in keys]
            for entry in entries:
                seen += [m.token for m in await entry.until_matches(3)]
            for wrong in (secret(), given[:-1], creator):
                offered.append(wrong)
                error = await stream_failure(
                    tapi.Enter(tpb.EnterRequest(tournament_id=tid), metadata=auth(wrong))
                )
                assert error.code() == grpc.StatusCode.UNAUTHENTICATED
            for wrong in (secret(), given, drawn[0], creator[:-1]):
                offered.append(wrong)
                cancel = tpb.CancelTournamentRequest(tournament_id=tid, reason="x")
                assert await code_of(tapi.CancelTournament(cancel, metadata=auth(wrong))) == (
                    grpc.StatusCode.PERMISSION_DENIED
                )
            done = await tapi.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id=tid, reason="enough"),
                metadata=auth(creator),
                timeout=30,
            )
            assert done.tournament.status == tpb.TOURNAMENT_STATUS_ENDED
            for entry in entries:
                await entry.rest()
            return seen

    with ServerProcess(data_dir, extra=[f"--admin-token={operator}"]) as server:
        seen = asyncio.run(asyncio.wait_for(scenario(server.address), 30))
        assert server.terminate() == 0
    text = server.stderr_path.read_text()
    assert "tournament_created" in text and "tournament_ended" in text
    for hidden in [*seen, *offered]:
        assert hidden not in text, "a key, secret or token is in the server's log"


# --------------------------------------------------------------------------- bugs found


def test_a_cancel_while_matches_are_being_started_ends_the_tournament(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> tuple[int, list[str]]:
        hosted = await host(tapi, deals=40, concurrency=100)
        director = director_of(server, hosted.tournament_id)
        await eventually(lambda: director.running, what="a first match started")
        cancel = tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id)
        done = await tapi.CancelTournament(cancel, metadata=auth(hosted.creator), timeout=30)
        running = [m for m, h in server.arena.matches.items() if h.running]
        return done.tournament.status, running

    status, running = with_tournaments(data_dir, scenario, 40)
    assert status == tpb.TOURNAMENT_STATUS_ENDED and not running, (status, len(running))


def accepted(data_dir: Path, spoiled: Mapping[str, tpb.CreateTournamentRequest]) -> list[str]:
    """The labels of the ``spoiled`` create requests a fresh server accepts; each one it
    refuses must be refused as INVALID_ARGUMENT."""

    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> list[str]:
        taken = []
        for label, request in spoiled.items():
            try:
                await tapi.CreateTournament(request, timeout=RPC)
                taken.append(label)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert server.tournaments is not None
        return taken

    return with_tournaments(data_dir, scenario)


def test_entrant_names_with_invisible_or_line_breaking_characters_are_refused(
    data_dir: Path,
) -> None:
    spoiled = {}
    for name in ("a\u2028b", "\u202eb", "b\u200b", "\ufeffa"):
        request = create_request(("a", "b", "c"))
        request.entrants[1].name = name
        spoiled[name] = request

    assert accepted(data_dir, spoiled) == []


def test_a_trailing_newline_makes_no_key_secret_or_request_id_valid(data_dir: Path) -> None:
    key, creator, request_id = create_request(), create_request(), create_request()
    key.entrants[1].key = secret() + "\n"  # no metadata can carry it
    creator.creator_secret = secret() + "\n"
    request_id.request_id = "id\n"
    spoiled = {"entrants[1].key": key, "creator_secret": creator, "request_id": request_id}

    assert accepted(data_dir, spoiled) == []


def test_a_create_retried_with_its_request_id_finds_the_first_tournament(data_dir: Path) -> None:
    """A retry proves it is the creator by repeating the creator secret (part of the
    settings), and is given the first tournament and the keys the server drew for it."""

    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        request = create_request(keys=["", "", ""], request_id="retry-me", creator_secret=secret())
        first = await tapi.CreateTournament(request, timeout=RPC)
        again = await tapi.CreateTournament(request, timeout=RPC)
        assert again.tournament.tournament_id == first.tournament.tournament_id
        assert list(again.entrant_keys) == list(first.entrant_keys)
        assert len(server.tournaments.directors) == 1

    with_tournaments(data_dir, scenario)


def test_whoever_guesses_a_request_id_gets_no_drawn_keys(data_dir: Path) -> None:
    """The tournament id derives from the request id and is public, so a short request id
    falls to an offline search, and the public TournamentInfo holds every setting a replay
    must repeat. Without a creator secret to repeat, a replay is refused, ALREADY_EXISTS,
    naming what it lacks, and learns no key; a tournament whose keys were all chosen by its
    creator has nothing to hide, and a replay finds it."""

    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        request = create_request(keys=["", "", ""], request_id="t7")
        first = await tapi.CreateTournament(request, timeout=RPC)
        replayed = await failure(tapi.CreateTournament(request, timeout=RPC))
        assert replayed.code() == grpc.StatusCode.ALREADY_EXISTS
        assert "creator_secret" in (replayed.details() or "")
        for key in first.entrant_keys:
            assert key not in (replayed.details() or "")
        chosen = create_request(request_id="chosen")
        made = await tapi.CreateTournament(chosen, timeout=RPC)
        again = await tapi.CreateTournament(chosen, timeout=RPC)
        assert again.tournament.tournament_id == made.tournament.tournament_id
        assert list(again.entrant_keys) == ["", "", ""]
        assert len(server.tournaments.directors) == 2

    with_tournaments(data_dir, scenario)


def test_a_create_retried_with_another_seed_is_refused(data_dir: Path) -> None:
    """A retry must ask for the same tournament: another seed is other settings, refused
    (ALREADY_EXISTS) rather than answered with a tournament dealt from a seed it did not ask
    for; a retry that names no seed takes the first's."""

    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        keys = [secret() for _ in range(3)]
        request = create_request(keys=keys, request_id="seeded", seed=bytes(32))
        first = await tapi.CreateTournament(request, timeout=RPC)
        other = create_request(keys=keys, request_id="seeded", seed=b"\x01" * 32)
        try:
            await tapi.CreateTournament(other, timeout=RPC)
            raise AssertionError("a retry with another seed was answered")
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.ALREADY_EXISTS
        unseeded = create_request(keys=keys, request_id="seeded")
        again = await tapi.CreateTournament(unseeded, timeout=RPC)
        assert again.tournament.tournament_id == first.tournament.tournament_id
        assert len(server.tournaments.directors) == 1

    with_tournaments(data_dir, scenario)


def test_a_create_retried_with_given_keys_finds_the_first_tournament(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        request = create_request(request_id="retry-me")
        first = await tapi.CreateTournament(request, timeout=RPC)
        again = await tapi.CreateTournament(request, timeout=RPC)
        assert again.tournament.tournament_id == first.tournament.tournament_id
        assert list(again.entrant_keys) == ["", "", ""]
        # The same request id for other settings (another key, say) is refused.
        other = create_request(request_id="retry-me")
        assert await code_of(tapi.CreateTournament(other, timeout=RPC)) == (
            grpc.StatusCode.ALREADY_EXISTS
        )
        assert len(server.tournaments.directors) == 1

    with_tournaments(data_dir, scenario)


def test_a_client_cannot_take_the_id_of_a_tournaments_next_match(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, api: MatchServiceAsyncStub
    ) -> tuple[bool, str]:
        hosted = await host(tapi, deals=2, concurrency=1)
        director = await settled(server, hosted.tournament_id)
        squat = f"t:{hosted.tournament_id}:1"
        taken = await api.CreateMatch(
            spb.CreateMatchRequest(game="triathlon", players=3, request_id=squat),
            timeout=RPC,
        )
        assert taken.match.match_id == match_id_for(squat)
        await server.arena.matches[director.match_ids[0]].cancel("its players gave up")

        def moved_on() -> bool:
            return 1 in director.match_ids or bool(director.task and director.task.done())

        await eventually(moved_on, what="the director to start the next match or fail")
        hosted_next = server.arena.matches.get(director.match_ids.get(1, ""))
        ours = hosted_next is not None and hosted_next.tournament_id == hosted.tournament_id
        alive = director.task is not None and not director.task.done()
        return ours and alive, hashlib.sha256(squat.encode()).hexdigest()

    started_its_own, _ = with_tournaments(data_dir, scenario)
    assert started_its_own
