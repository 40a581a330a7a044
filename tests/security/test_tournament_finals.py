"""A final tournament's answers are kept as the bytes sent (issue 29.1).

Why: nothing of a final tournament changes, yet anyone may ask for a page of up to 1,000 of
its match lines again and again, and each page was made line by line and serialized per call
(about 5 ms of the event loop; from the store, a read as well). Its lines are made once, a
chunk at a time, and kept; a page is their bytes joined after its brief's."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from cardarena.server.store import EventStore
from cardarena.server.tournaments import finals as finals_module
from cardarena.server.tournaments import info as info_module
from cardarena.server.tournaments.finals import CHUNK, Finals
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import run
from .support import served
from .test_tournament_reload import cancelled_one, ended_tournaments
from .tournaments import apis

PLANNED = 7 * CHUNK + 13


def lines_of(indices: range) -> list[tpb.TournamentMatch]:
    return [
        tpb.TournamentMatch(index=i, group=i // 4, entrants=[f"bot{i % 5}", "b"], match_id=str(i))
        for i in indices
    ]


def test_any_page_is_the_lines_made_whole_whatever_was_kept_before() -> None:
    """Pages at random offsets and lengths, across chunk edges and the plan's ragged end,
    over a cache that is cold, warm, partly evicted: each is exactly the page's lines
    serialized, and a chunk is made once while it is kept."""
    made: list[range] = []

    async def make(span: range) -> list[tpb.TournamentMatch]:
        made.append(span)
        return lines_of(span)

    async def scenario() -> None:
        rng = random.Random(7)
        roomy, tight = Finals(), Finals(lines_bytes=40 * 1024)
        for finals in (roomy, tight):
            for _ in range(200):
                first = rng.randrange(PLANNED + 1)
                indices = range(first, min(PLANNED, first + rng.randrange(1, 400)))
                page = await finals.lines("t", PLANNED, indices, make)
                whole = tpb.TournamentInfo(matches=lines_of(indices)).SerializeToString()
                assert page == whole, indices
        for span in made:
            assert span.start % CHUNK == 0 and (span.stop % CHUNK == 0 or span.stop == PLANNED)

    run(scenario())


def test_a_kept_chunk_is_not_made_again_and_tournaments_do_not_share_lines() -> None:
    made: list[tuple[str, range]] = []

    def maker(name: str) -> Any:
        async def make(span: range) -> list[tpb.TournamentMatch]:
            made.append((name, span))
            return lines_of(span)

        return make

    async def scenario() -> None:
        finals = Finals()
        await finals.lines("a", PLANNED, range(10, 3 * CHUNK), maker("a"))
        assert made == [("a", range(3 * CHUNK))]
        await finals.lines("a", PLANNED, range(CHUNK + 1), maker("a"))
        assert len(made) == 1, "kept chunks were made again"
        await finals.lines("a", PLANNED, range(CHUNK, 5 * CHUNK), maker("a"))
        assert made[1] == ("a", range(3 * CHUNK, 5 * CHUNK)), "only the chunks missing"
        await finals.lines("b", PLANNED, range(10, 20), maker("b"))
        assert made[2] == ("b", range(CHUNK))
        assert await finals.lines("a", PLANNED, range(5, 5), maker("a")) == b""

    run(scenario())


def test_readers_asking_at_once_for_lines_not_kept_make_them_once() -> None:
    """A tournament that has just ended, its page opened by many at once: the first reader
    makes its lines (a read of the store, as a rule), the others wait and find them kept; a
    reader of other chunks of it makes only those, a reader of another tournament does not
    wait; a make that fails fails its own reader only."""
    made: list[tuple[str, range]] = []
    gate = asyncio.Event()

    def maker(name: str, fail: bool = False) -> Any:
        async def make(span: range) -> list[tpb.TournamentMatch]:
            made.append((name, span))
            await gate.wait()  # slow, as a read of the store is
            if fail:
                raise OSError("the store is gone")
            return lines_of(span)

        return make

    async def scenario() -> None:
        finals = Finals()
        whole = tpb.TournamentInfo(matches=lines_of(range(2 * CHUNK))).SerializeToString()
        failing = asyncio.create_task(finals.lines("a", PLANNED, range(CHUNK), maker("a", True)))
        await asyncio.sleep(0)
        readers = [
            asyncio.create_task(finals.lines("a", PLANNED, range(2 * CHUNK), maker("a")))
            for _ in range(20)
        ]
        other = asyncio.create_task(finals.lines("b", PLANNED, range(CHUNK), maker("b")))
        await asyncio.sleep(0.01)
        assert made == [("a", range(CHUNK)), ("b", range(CHUNK))]  # the rest wait
        gate.set()
        with pytest.raises(OSError):
            await failing
        assert all(page == whole for page in await asyncio.gather(*readers))
        await other
        assert made[2:] == [("a", range(2 * CHUNK))], "made once for the twenty readers"
        later = await finals.lines("a", PLANNED, range(CHUNK, 3 * CHUNK), maker("a"))
        pages = tpb.TournamentInfo(matches=lines_of(range(CHUNK, 3 * CHUNK)))
        assert later == pages.SerializeToString()
        assert made[3] == ("a", range(2 * CHUNK, 3 * CHUNK)), "only the chunk not kept"
        assert not finals._making  # nothing kept for readers gone

    run(scenario())


def test_pages_of_a_final_tournament_are_made_once_in_memory_and_from_the_store(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked again, a page of an ended tournament in memory makes no line, and one read back
    from the store reads no match: the same answer each time, the page made whole."""
    monkeypatch.setattr(finals_module, "CHUNK", 3)
    built: list[range] = []
    real_lines = info_module.match_lines

    def counting(director: Any, indices: range, **kwargs: Any) -> Any:
        built.append(indices)
        return real_lines(director, indices, **kwargs)

    monkeypatch.setattr("cardarena.server.tournaments.pages.match_lines", counting)

    def page(tournament_id: str, first: int, limit: int) -> tpb.GetTournamentRequest:
        return tpb.GetTournamentRequest(
            tournament_id=tournament_id,
            include_matches=True,
            matches_from=first,
            matches_limit=limit,
        )

    async def in_memory() -> tuple[str, tpb.TournamentInfo]:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            tournament_id = await cancelled_one(server, tapi)
            whole = (await tapi.GetTournament(page(tournament_id, 0, 0), timeout=RPC)).tournament
            assert len(whole.matches) == whole.planned > 3 and built  # two chunks at least
            built.clear()
            for first, limit in ((0, 0), (1, 4), (2, 3)):
                again = await tapi.GetTournament(page(tournament_id, first, limit), timeout=RPC)
                expected = tpb.TournamentInfo()
                expected.CopyFrom(whole)
                del expected.matches[:]
                expected.matches.extend(
                    whole.matches[first : first + (limit or len(whole.matches))]
                )
                assert again.tournament == expected
            assert built == [], "lines of a final tournament were made again"
            return tournament_id, whole

    reads: list[object] = []
    real_get_matches = EventStore.get_matches

    async def counted(self: EventStore, match_ids: Any) -> Any:
        reads.append(match_ids)
        return await real_get_matches(self, match_ids)

    async def after_restart(tournament_id: str, whole: tpb.TournamentInfo) -> None:
        monkeypatch.setattr(EventStore, "get_matches", counted)
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            for _ in range(3):
                answer = await tapi.GetTournament(page(tournament_id, 0, 0), timeout=RPC)
                assert answer.tournament == whole
            assert len(reads) == 1, "a kept page was read from the store again"
            assert tournament_id not in server.tournaments.directors

    tournament_id, whole = run(in_memory(), 60)
    run(after_restart(tournament_id, whole), 60)


def test_listing_final_tournaments_again_reads_no_summary_row(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Their summaries, read (or made) once, are kept in memory: a listing reads the page of
    tournament rows, and the same answer comes back."""
    ids = run(ended_tournaments(data_dir, 2), 60)
    reads: list[list[str]] = []
    real = EventStore.kept_summaries

    async def counted(self: EventStore, kind: Any, names: Any) -> Any:
        if kind == "tournament" and names:
            reads.append(list(names))
        return await real(self, kind, names)

    monkeypatch.setattr(EventStore, "kept_summaries", counted)

    async def scenario() -> None:
        async with served(data_dir) as server, apis(server) as (_, _api, tapi):
            first = await tapi.ListTournaments(tpb.ListTournamentsRequest(), timeout=RPC)
            again = await tapi.ListTournaments(tpb.ListTournamentsRequest(), timeout=RPC)
            assert [i.tournament_id for i in first.tournaments] == ids
            assert again == first
            assert len(reads) == 1, reads

    run(scenario(), 60)
