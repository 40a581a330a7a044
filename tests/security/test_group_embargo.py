"""No one outside a match learns a duplicate group's cards before the group has ended (issue 28).

Every rotation of a hosted tournament's duplicate group is dealt the same cards, and in a trick
game every card is played: with one match at a time, a stranger who watched rotation 0 knew
every hand of rotations 1 and 2 before they started; with several at once, watching one showed
the cards of the others as they were played. Pinned here (docs/rules.md §4.10): until every
match of its group has ended, a match of the group is readable in any form that shows cards
(WatchMatch, GetMatch, GetMatchLog, and the same through the gRPC-Web gateway) by its own seats
and the operator only; anyone else is refused FAILED_PRECONDITION with words naming the match,
its group and how many of its rotations have ended, and learns not one card; lists keep the
match without its totals, winners or hash, and the standings count ended groups only. Once
the group has ended, a stranger reads every match of it in full and its logs audit. The same
after a restart, for resumed matches and for an ended tournament read back from the store.
In-process servers on 127.0.0.1:0; every wait is bounded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from google.protobuf.message import Message

from cardarena.server.api import Access
from cardarena.server.hosting import arena as arena_module
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import STREAM_TIMEOUT, audit, auth, grpc_web, run, seat_feed
from ..waiting import eventually
from .support import Table, play_hosted_to_end, play_lowest, secret, served
from .tournaments import apis, director_of, host

if TYPE_CHECKING:
    from cardarena.server.app import Server
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

OPERATOR = secret()
LOCKED = Access(operator_token=OPERATOR)
AS_OPERATOR = auth(OPERATOR)
HELD = grpc.StatusCode.FAILED_PRECONDITION
OK = grpc.StatusCode.OK
READERS = ("GetMatch", "WatchMatch", "GetMatchLog")
PLAYERS = 3
"""Three entrants at three seats: one lineup, so each deal is one group of three rotations."""


def cards_in(message: Message) -> set[bytes]:
    """Every card a message carries, anywhere in it (as its encoded ``Card``)."""
    found: set[bytes] = set()
    for descriptor, value in message.ListFields():
        kind = descriptor.message_type
        if kind is None or kind.GetOptions().map_entry:
            continue
        values = value if descriptor.is_repeated else [value]
        for each in values:
            if kind.full_name == "cardarena.v1.Card":
                found.add(each.SerializeToString())
            else:
                found |= cards_in(each)
    return found


def held_back(match_id: str, tournament_id: str, group: int, ended: int) -> str:
    has = "has" if ended == 1 else "have"
    return (
        f"match {match_id} belongs to duplicate group {group} of tournament {tournament_id}:"
        f" readable once all {PLAYERS} of its rotations have ended ({ended} {has})"
    )


@dataclass
class Reading:
    """What one caller got from every reader of one match."""

    codes: dict[str, grpc.StatusCode] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    cards: set[bytes] = field(default_factory=set)
    info: spb.MatchInfo | None = None
    log: spb.GetMatchLogResponse | None = None

    def refused(self, message: str) -> None:
        """Every reader refused this caller with ``message``, and it learned no card."""
        assert self.codes == dict.fromkeys(READERS, HELD), self.codes
        assert self.details == dict.fromkeys(READERS, message), self.details
        assert not self.cards

    def refusal(self, error: grpc.aio.AioRpcError, reader: str) -> None:
        self.codes[reader] = error.code()
        self.details[reader] = error.details() or ""


async def read_match(
    api: MatchServiceAsyncStub, match_id: str, metadata: tuple[tuple[str, str], ...] = ()
) -> Reading:
    """Try every reader of ``match_id`` as the caller ``metadata`` makes: GetMatch, WatchMatch
    from the start (up to the snapshot's seq, or its end) and GetMatchLog; every card seen."""
    out = Reading()
    try:
        got = await api.GetMatch(
            spb.GetMatchRequest(match_id=match_id), metadata=metadata, timeout=RPC
        )
        out.codes["GetMatch"], out.info = OK, got.match
        out.cards |= cards_in(got)
    except grpc.aio.AioRpcError as error:
        out.refusal(error, "GetMatch")
    watch = api.WatchMatch(
        spb.WatchMatchRequest(match_id=match_id), metadata=metadata, timeout=STREAM_TIMEOUT
    )
    try:
        upto = None
        while (message := await asyncio.wait_for(watch.read(), RPC)) is not grpc.aio.EOF:
            assert isinstance(message, spb.WatchMatchResponse)
            out.cards |= cards_in(message)
            kind = message.WhichOneof("kind")
            if kind == "snapshot":
                upto = message.snapshot.seq
            elif kind == "event" and upto is not None and message.event.seq >= upto:
                break
        out.codes["WatchMatch"] = OK
    except grpc.aio.AioRpcError as error:
        out.refusal(error, "WatchMatch")
    finally:
        watch.cancel()
    try:
        log = await api.GetMatchLog(
            spb.GetMatchLogRequest(match_id=match_id), metadata=metadata, timeout=RPC
        )
        out.codes["GetMatchLog"], out.log = OK, log
        for entry in log.entries:
            out.cards |= cards_in(pb.Event.FromString(entry.event))
    except grpc.aio.AioRpcError as error:
        out.refusal(error, "GetMatchLog")
    return out


async def rotation(server: Server, tournament_id: str, index: int) -> Table:
    """The tournament's match ``index`` once it has started with every seat taken, and the
    tokens of its seats (the ones its entrants are told)."""
    director = director_of(server, tournament_id)
    await eventually(
        lambda: index in director.seated or index in director.ended_matches,
        within=20,
        what=f"match {index} seated",
    )
    tokens = [director.token(index, seat) for seat in range(PLAYERS)]
    return Table(director.match_ids[index], PLAYERS, tokens)


act = play_lowest
"""One action of the seat to act, with its token (its lowest legal one)."""


async def revealed(server: Server, table: Table) -> None:
    """Wait until the match's group has ended and its seed is in its log."""
    await eventually(
        lambda: server.arena.matches[table.match_id].revealed,
        within=20,
        what=f"match {table.match_id} revealed",
    )


async def lines(
    tapi: TournamentServiceAsyncStub, tournament_id: str, metadata: tuple[tuple[str, str], ...]
) -> tpb.TournamentInfo:
    request = tpb.GetTournamentRequest(tournament_id=tournament_id, include_matches=True)
    return (await tapi.GetTournament(request, metadata=metadata, timeout=RPC)).tournament


async def listed(
    api: MatchServiceAsyncStub, metadata: tuple[tuple[str, str], ...] = ()
) -> dict[str, spb.MatchInfo]:
    page = await api.ListMatches(spb.ListMatchesRequest(page_size=1000), metadata=metadata)
    return {info.match_id: info for info in page.matches}


def without_results(info: spb.MatchInfo | tpb.TournamentMatch) -> bool:
    """Nothing its hands made: no totals, no winners, no hash that pins its log."""
    return not info.totals and not info.winners and not info.last_hash and not cards_in(info)


async def start(
    server: Server, tapi: TournamentServiceAsyncStub, *, deals: int, concurrency: int
) -> str:
    hosted = await host(tapi, metadata=AS_OPERATOR, deals=deals, concurrency=concurrency)
    return hosted.tournament_id


def test_one_match_at_a_time_a_stranger_learns_no_card_of_a_rotation_still_to_come(
    data_dir: Path,
) -> None:
    """Concurrency 1, two deals (two groups of three rotations). While group 0 is played, a
    stranger is refused every reader of its matches, ended or running, and learns no card;
    its seats play and read, the operator watches; lists and standings show nothing its
    hands made. Once group 0 has ended, a stranger reads all of it and its logs audit, while
    group 1 is held back in turn."""

    async def scenario() -> None:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, tapi):
            tid = await start(server, tapi, deals=2, concurrency=1)
            first = await rotation(server, tid, 0)
            (await read_match(api, first.match_id)).refused(held_back(first.match_id, tid, 0, 0))
            seat = await read_match(api, first.match_id, auth(first.tokens[1]))
            operator = await read_match(api, first.match_id, AS_OPERATOR)
            for reading in (seat, operator):  # the log is final (and public) later, for all
                assert reading.codes == {"GetMatch": OK, "WatchMatch": OK, "GetMatchLog": HELD}

            await play_hosted_to_end(server, api, first)  # its seats still play it
            # Its own seats read its results but not its hash: the chain commits to the
            # deal every rotation of the group plays, hands and all (a guess can be tested).
            mine = await read_match(api, first.match_id, auth(first.tokens[1]))
            assert mine.info is not None and mine.info.totals and not mine.info.last_hash
            ours = await read_match(api, first.match_id, AS_OPERATOR)
            assert ours.info is not None and ours.info.last_hash
            second = await rotation(server, tid, 1)
            for table in (first, second):  # the one played, the one it would give away
                reading = await read_match(api, table.match_id)
                reading.refused(held_back(table.match_id, tid, 0, 1))
            watched = await read_match(api, first.match_id, AS_OPERATOR)
            assert watched.codes["WatchMatch"] == OK and len(watched.cards) > 20
            # A seat of one rotation is a stranger to the others.
            other = await read_match(api, second.match_id, auth(first.tokens[0]))
            other.refused(held_back(second.match_id, tid, 0, 1))

            everyone = await listed(api)
            assert without_results(everyone[first.match_id])
            # Nor its length: how long a deal ran is something its hands made.
            assert everyone[first.match_id].last_seq == 0
            whole_info = (await listed(api, AS_OPERATOR))[first.match_id]
            assert whole_info.totals and whole_info.last_seq > 20
            its_seat = (await listed(api, auth(first.tokens[1])))[first.match_id]
            assert its_seat.last_seq == whole_info.last_seq and not its_seat.last_hash
            assert (await listed(api, auth(second.tokens[0])))[first.match_id].last_seq == 0
            public = await lines(tapi, tid, ())
            assert public.finished == 1 and public.matches[0].status == spb.MATCH_STATUS_ENDED
            assert all(without_results(line) for line in public.matches)
            assert all(s.matches == 0 for s in public.standings), public.standings
            whole = await lines(tapi, tid, AS_OPERATOR)
            assert whole.matches[0].totals and whole.matches[0].last_hash

            await play_hosted_to_end(server, api, second)
            third = await rotation(server, tid, 2)
            await play_hosted_to_end(server, api, third)
            group = (first, second, third)
            for table in group:
                await revealed(server, table)
            nxt = await rotation(server, tid, 3)  # group 1, rotation 0: held back in turn
            (await read_match(api, nxt.match_id)).refused(held_back(nxt.match_id, tid, 1, 0))

            public = await lines(tapi, tid, ())
            everyone = await listed(api)
            for index, table in enumerate(group):
                reading = await read_match(api, table.match_id)
                assert reading.codes == dict.fromkeys(READERS, OK), reading.details
                assert reading.info is not None and reading.info.totals
                assert reading.log is not None and len(reading.cards) > 20
                audit(reading.log)
                assert everyone[table.match_id].last_seq == reading.log.entries[-1].seq
                assert public.matches[index].last_hash == reading.log.entries[-1].hash
                assert public.matches[index].totals

            async def counted() -> bool:  # (the standings are computed at most once a second)
                info = await lines(tapi, tid, ())
                return all(s.matches == PLAYERS for s in info.standings)

            await eventually(counted, what="group 0 in the standings")

    run(scenario(), 90)


def test_several_matches_at_once_a_stranger_learns_no_card_of_a_concurrent_rotation(
    data_dir: Path,
) -> None:
    """Concurrency 3: every rotation of the group runs at once. Watching one showed the cards
    of the others as they were played; now a stranger is refused each, ended or running,
    while each seat plays its own and the operator watches them all. Once the last has
    ended, a stranger reads every one in full."""

    async def scenario() -> None:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, tapi):
            tid = await start(server, tapi, deals=1, concurrency=3)
            group = [await rotation(server, tid, index) for index in range(PLAYERS)]
            first, second, third = group
            for _ in range(6):  # a few cards of the second on the table
                await act(server, api, second)
            await play_hosted_to_end(server, api, first)
            await eventually(
                lambda: 0 in director_of(server, tid).ended_matches, what="rotation 0 collected"
            )
            for table in group:
                (await read_match(api, table.match_id)).refused(
                    held_back(table.match_id, tid, 0, 1)
                )
            other = await read_match(api, third.match_id, auth(second.tokens[2]))
            other.refused(held_back(third.match_id, tid, 0, 1))
            watched = await read_match(api, second.match_id, AS_OPERATOR)
            assert watched.codes["WatchMatch"] == OK and watched.cards
            for table in (second, third):  # each seat still reads its own stream
                feed = seat_feed(api, table.match_id, 0, table.tokens[0])
                try:
                    assert (await feed.snapshot()).seq > 0
                finally:
                    feed.cancel()
            assert all(without_results(line) for line in (await lines(tapi, tid, ())).matches)

            for table in (second, third):
                await play_hosted_to_end(server, api, table)
            for table in group:
                await revealed(server, table)
            for table in group:
                reading = await read_match(api, table.match_id)
                assert reading.codes == dict.fromkeys(READERS, OK), reading.details
                assert reading.log is not None and reading.cards
                audit(reading.log)

    run(scenario(), 90)


def test_after_a_restart_resumed_matches_and_stored_ones_are_held_back_alike(
    data_dir: Path,
) -> None:
    """Rotation 0 ends, the server stops. The next one reads rotation 0 back from the store
    and resumes rotation 1: both are held back from a stranger, with the group's progress as
    the resumed director found it; the seats play on. Once the group has ended, a third
    server reads the ended tournament back from the store and shows everything."""

    async def before() -> tuple[str, list[str]]:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, tapi):
            tid = await start(server, tapi, deals=1, concurrency=1)
            first = await rotation(server, tid, 0)
            await play_hosted_to_end(server, api, first)
            second = await rotation(server, tid, 1)
            return tid, [first.match_id, second.match_id]

    async def after(tid: str, started: list[str]) -> list[str]:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, _t):
            for match_id in started:

                async def refused(match_id: str = match_id) -> Reading | None:
                    reading = await read_match(api, match_id)
                    expected = held_back(match_id, tid, 0, 1)
                    return reading if reading.details.get("GetMatch") == expected else None

                (await eventually(refused, what=f"{match_id} refused")).refused(
                    held_back(match_id, tid, 0, 1)
                )
            operator = await read_match(api, started[0], AS_OPERATOR)
            assert operator.codes["WatchMatch"] == OK and operator.cards
            second = await rotation(server, tid, 1)
            assert second.match_id == started[1]
            await play_hosted_to_end(server, api, second)
            third = await rotation(server, tid, 2)
            await play_hosted_to_end(server, api, third)
            await eventually(lambda: director_of(server, tid).ended, what="tournament ended")
            return [*started, third.match_id]

    async def reread(tid: str, group: list[str]) -> None:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, tapi):
            public = await lines(tapi, tid, ())
            assert public.status == tpb.TOURNAMENT_STATUS_ENDED
            assert [line.match_id for line in public.matches] == group
            for line in public.matches:
                reading = await read_match(api, line.match_id)
                assert reading.codes == dict.fromkeys(READERS, OK), reading.details
                assert reading.log is not None and reading.log.entries[-1].hash == line.last_hash
                audit(reading.log)
            assert all(s.matches == PLAYERS for s in public.standings)

    tid, started = run(before(), 60)
    group = run(after(tid, started), 60)
    run(reread(tid, group), 60)


def test_a_rotation_no_longer_in_memory_is_listed_without_its_results(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ended match leaves memory once enough others have ended (the arena keeps 1,000; none
    here), and a list then reads it from its stored record. Before: listed from the store, a
    rotation its group still held back showed a stranger its totals and winners."""
    monkeypatch.setattr(arena_module, "MAX_ENDED_IN_MEMORY", 0)

    async def scenario() -> None:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, tapi):
            tid = await start(server, tapi, deals=1, concurrency=1)
            first = await rotation(server, tid, 0)
            await play_hosted_to_end(server, api, first)
            await rotation(server, tid, 1)
            await eventually(
                lambda: first.match_id not in server.arena.matches or None,
                what="rotation 0 dropped from memory",
            )
            assert without_results((await listed(api))[first.match_id])
            assert first.match_id not in server.arena.matches  # listed from the store
            assert (await listed(api, AS_OPERATOR))[first.match_id].totals

    run(scenario(), 60)


def test_a_seat_joining_again_as_its_match_ends_is_not_told_its_hash(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JoinMatch checks that the match runs, then awaits its writer: a seat joining again
    with its own token while its last card is played got the ended match's last hash, which
    pins the deal the group's other rotations are still playing (a review's find)."""

    async def scenario() -> None:
        async with served(data_dir, access=LOCKED) as server, apis(server) as (_, api, tapi):
            tid = await start(server, tapi, deals=1, concurrency=1)
            first = await rotation(server, tid, 0)
            router = server.service.router
            writer = router.writer
            checked, played = asyncio.Event(), asyncio.Event()

            async def after_the_last_card(match_id: str, context: Any) -> Any:
                if not checked.is_set():  # JoinMatch's call (the actions' pass straight on)
                    checked.set()  # it found the match running ...
                    await played.wait()  # ... and its last card is played meanwhile
                return await writer(match_id, context)

            monkeypatch.setattr(router, "writer", after_the_last_card)
            request = spb.JoinMatchRequest(match_id=first.match_id, token=first.tokens[0])
            joining = asyncio.ensure_future(api.JoinMatch(request, timeout=RPC))
            await asyncio.wait_for(checked.wait(), RPC)
            await play_hosted_to_end(server, api, first)
            played.set()
            joined = await joining
            assert joined.seat == 0 and joined.match.status == spb.MATCH_STATUS_ENDED
            assert joined.match.totals and not joined.match.last_hash
            assert server.arena.matches[first.match_id].held_back

    run(scenario(), 60)


def test_through_the_gateway_a_browser_is_held_back_alike(data_dir: Path) -> None:
    """What a stranger's browser asks through the gRPC-Web gateway is refused the same way,
    with the same words (which the web app shows); the operator's token opens it."""

    async def scenario() -> None:
        async with (
            served(data_dir, access=LOCKED, web="127.0.0.1:0") as server,
            apis(server) as (_, _api, tapi),
        ):
            tid = await start(server, tapi, deals=1, concurrency=1)
            first = await rotation(server, tid, 0)
            expected = held_back(first.match_id, tid, 0, 0)
            calls: list[tuple[str, Any]] = [
                ("GetMatch", spb.GetMatchRequest(match_id=first.match_id)),
                ("WatchMatch", spb.WatchMatchRequest(match_id=first.match_id)),
                ("GetMatchLog", spb.GetMatchLogRequest(match_id=first.match_id)),
            ]
            for method, request in calls:
                answer = await asyncio.to_thread(grpc_web, server.web_port, method, request)
                assert answer == (HELD.value[0], expected, []), (method, answer)
            status, _, messages = await asyncio.to_thread(
                grpc_web,
                server.web_port,
                "GetMatch",
                calls[0][1],
                {"authorization": f"Bearer {OPERATOR}"},
            )
            assert status == 0 and len(messages) == 1

    run(scenario(), 60)
