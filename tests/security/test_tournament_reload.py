"""An ended tournament is final, and anyone may read it.

It is read back from the store on demand (after a restart, or once it has left the bounded set
kept in memory): calls that arrive while it is being read must wait for the whole of it, since
a half-read one would be answered as ENDED with none of its results, and signed as final. And
it is built and signed once, not again for every call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cardarena.server.app import Server
from cardarena.server.tournaments import info as info_module
from cardarena.server.tournaments import pages as pages_module
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from .support import served
from .tournaments import apis, host, settled

if TYPE_CHECKING:
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

CALLS = 8


async def cancelled_one(server: Server, tapi: TournamentServiceAsyncStub) -> str:
    """A tournament hosted, under way, then cancelled (ended): its id."""
    hosted = await host(tapi, deals=2, concurrency=3)
    await settled(server, hosted.tournament_id)
    cancelled = await tapi.CancelTournament(
        tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id, reason="r"),
        metadata=auth(hosted.creator),
        timeout=RPC,
    )
    assert cancelled.tournament.status == tpb.TOURNAMENT_STATUS_ENDED
    return hosted.tournament_id


async def ended_tournaments(data_dir: Path, count: int = 1) -> list[str]:
    """``count`` tournaments hosted, under way, then cancelled (ended) on a server that stops."""
    async with served(data_dir) as server, apis(server) as (_, _api, tapi):
        return [await cancelled_one(server, tapi) for _ in range(count)]


def test_concurrent_reads_of_a_reloaded_tournament_all_see_it_whole(data_dir: Path) -> None:
    async def before_restart() -> tpb.TournamentInfo:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            tournament_id = await cancelled_one(server, tapi)
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            return (await tapi.GetTournament(whole, timeout=RPC)).tournament

    async def after_restart(tournament_id: str) -> list[tpb.TournamentInfo]:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            assert tournament_id not in server.tournaments.directors  # read on demand
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            answers = await asyncio.gather(
                *(tapi.GetTournament(whole, timeout=RPC) for _ in range(CALLS))
            )
            # Its kept results and each page's own rows answered: it was not read back whole.
            assert tournament_id not in server.tournaments.directors
            return [answer.tournament for answer in answers]

    ended = run(before_restart(), 60)
    assert ended.started > 0 and ended.HasField("results_signature")
    for info in run(after_restart(ended.tournament_id), 60):
        assert info == ended


def test_a_tournament_read_back_before_its_results_were_kept_is_signed_whole(
    data_dir: Path,
) -> None:
    """A server can stop between a tournament's end and the keeping of its signed results:
    the next reads it back, and must sign it only once every match of it is read (a director
    being read back looks final before its matches are: signed then, its results said that
    no match was ever played, and were kept so)."""

    async def before_restart() -> tpb.TournamentInfo:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            tournament_id = await cancelled_one(server, tapi)
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            return (await tapi.GetTournament(whole, timeout=RPC)).tournament

    async def after_restart(tournament_id: str) -> tpb.TournamentInfo:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            return (await tapi.GetTournament(whole, timeout=RPC)).tournament

    ended = run(before_restart(), 60)
    (database,) = data_dir.rglob("*.sqlite3")
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        db.execute("DELETE FROM tournament_results")
    assert ended.started == 3
    assert run(after_restart(ended.tournament_id), 60) == ended
    assert run(after_restart(ended.tournament_id), 60) == ended  # as kept


def test_an_ended_tournament_is_built_and_signed_once_not_per_call(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone may ask for an ended tournament without a credential, and building and signing
    one of 100,000 matches took 0.9 s of the event loop: asked again and again, that stalled
    every match on the server. It is built once per change, and every answer is the same;
    and it is built as the tournament becomes final, before anyone asks, so that no reader's
    call is the one that costs it (a first read of 100,000 lines took seconds)."""
    built: list[bool] = []
    real = info_module.tournament_info

    def counting(director: Any, *, matches: range | None = None) -> tpb.TournamentInfo:
        built.append(matches is not None)
        return real(director, matches=matches)

    async def scenario() -> None:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            hosted = await host(tapi, deals=2, concurrency=3)
            await settled(server, hosted.tournament_id)
            monkeypatch.setattr(info_module, "tournament_info", counting)
            await tapi.CancelTournament(
                tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id),
                metadata=auth(hosted.creator),
                timeout=RPC,
            )
            store, tid = server.arena.store, hosted.tournament_id
            for _ in range(500):  # signed once final, nobody having asked, and kept
                if built and tid in await store.kept_summaries("results", [tid]):
                    break
                await asyncio.sleep(0.01)
            assert built == [True]
            assert tid in await store.kept_summaries("results", [tid])  # a restart signs no more
            answers = [
                (
                    await tapi.GetTournament(
                        tpb.GetTournamentRequest(
                            tournament_id=hosted.tournament_id, include_matches=whole
                        ),
                        timeout=RPC,
                    )
                ).tournament
                for whole in (False, True, False, True, False)
            ]
            assert built == [True]
            brief, whole = answers[0], answers[1]
            assert whole.matches and not brief.matches
            assert brief.results_signature == whole.results_signature
            assert answers[2:] == [brief, whole, brief]

    run(scenario(), 60)


def test_a_server_restarts_past_stored_tournaments_it_would_refuse_today(data_dir: Path) -> None:
    """A stop rule of ±1e200, accepted before ``MAX_EFFECT``, is read back and runs; a row
    that cannot be read at all is logged and skipped. Neither keeps the server from starting
    and hosting the rest."""

    async def create() -> list[str]:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            return [(await host(tapi, deals=2, concurrency=1)).tournament_id for _ in range(3)]

    huge, broken, fine = run(create(), 60)
    (database,) = data_dir.rglob("*.sqlite3")
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        (config,) = db.execute("SELECT config FROM tournaments WHERE tournament_id = ?", (huge,))
        spec = json.loads(config[0])
        a, b = spec["entrants"][:2]
        spec["sprt"] = {"a": a, "b": b, "alpha": 0.05, "beta": 0.05, "d0": -1e200, "d1": 1e200}
        db.execute(
            "UPDATE tournaments SET config = ? WHERE tournament_id = ?",
            (json.dumps(spec).encode(), huge),
        )
        db.execute("UPDATE tournaments SET config = ? WHERE tournament_id = ?", (b"{", broken))

    async def restart() -> None:
        async with served(data_dir) as server:
            assert set(server.tournaments.directors) == {huge, fine}

    run(restart(), 60)


def test_listing_ended_tournaments_reads_their_summaries_not_their_matches(
    data_dir: Path,
) -> None:
    """ListTournaments needs no credential, and after a restart it read every listed ended
    tournament back whole (a page of big ones took 18.5 s and 612 MB). Its summary is kept as
    a row the first time it is listed, and every later listing reads the row: no director is
    read back, and the answer is the same."""

    async def listed() -> tuple[list[tpb.TournamentInfo], int]:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            page = await tapi.ListTournaments(tpb.ListTournamentsRequest(), timeout=RPC)
            return list(page.tournaments), len(server.tournaments.directors)

    ids = run(ended_tournaments(data_dir, 2), 60)
    first, read_back = run(listed(), 60)
    assert [i.tournament_id for i in first] == ids and read_back == 2  # folded once, kept
    again, read_back = run(listed(), 60)
    assert again == first
    assert read_back == 0, "a listed ended tournament was read back instead of its summary"


def test_reading_an_ended_tournament_back_costs_batches_not_a_read_per_match(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GetTournament needs no credential, and reading back a tournament of 100,000 planned
    matches after a restart took 2.9 s: one read of its row and one of its log per match.
    Its matches' rows and kept outcomes are read a batch at a time."""
    from cardarena.server.store import EventStore

    singles: list[str] = []
    real = EventStore.get_match

    async def counted(self: EventStore, match_id: str) -> Any:
        singles.append(match_id)
        return await real(self, match_id)

    async def after_restart(tournament_id: str) -> tpb.TournamentInfo:
        monkeypatch.setattr(EventStore, "get_match", counted)
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            return (await tapi.GetTournament(whole, timeout=RPC)).tournament

    (tournament_id,) = run(ended_tournaments(data_dir), 60)
    info = run(after_restart(tournament_id), 60)
    assert info.started > 0 and info.status == tpb.TOURNAMENT_STATUS_ENDED
    # One read of its first match's row (whether the entry was sealed), none per match.
    assert len(singles) <= 1 < info.started, singles


def test_a_final_tournaments_page_made_in_slices_is_the_page_made_whole(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ended tournament still in memory makes a page's lines a slice at a time, between
    turns of the event loop (a 1,000-line page was 5 ms of it in one piece, which a player's
    action waited for): the answer is the page made in one piece, and its signature."""
    monkeypatch.setattr(pages_module, "LINES_BETWEEN_TURNS", 2)

    async def scenario() -> None:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            tournament_id = await cancelled_one(server, tapi)
            whole = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
            answer = (await tapi.GetTournament(whole, timeout=RPC)).tournament
            director = server.tournaments.directors[tournament_id]
            assert len(director.plans) > 2 * 2  # three slices at least
            made = info_module.signed_brief(director, server.arena.signer)
            made.matches.extend(info_module.match_lines(director, range(len(director.plans))))
            assert answer == made
            assert answer.HasField("results_signature") and len(answer.matches) == answer.planned

    run(scenario(), 60)
