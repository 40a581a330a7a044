"""The TournamentService against hostile clients (issue 12): every field a client sends, its
credentials, its rate, the order of its calls and how fast it reads.

What is pinned here: each bad CreateTournament field is INVALID_ARGUMENT naming that field
(and echoing no secret); a locked server creates for its operator only and everyone else is
rate-limited; Enter takes only this tournament's entrant keys, and a seat token it hands out
opens that seat of that match and nothing else; only the operator or the creator cancels, and
then every running match ends with a logged MatchCancelled; an entrant may connect many times,
and a stream that stops reading is dropped rather than queued; a slow watcher is conflated;
ListTournaments refuses forged page tokens; undecodable bytes are INVALID_ARGUMENT naming the
message type. In-process servers on 127.0.0.1:0; every wait is bounded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from cardarena.server.api import Access
from cardarena.server.api.limits import Rate
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import auth, run
from .support import code_of, create_table, failure, raw_unary, secret, served
from .test_errors import GARBAGE
from .tournaments import (
    TMETHODS,
    TSERVICE,
    apis,
    create_request,
    host,
    settled,
    stream_failure,
    with_tournaments,
)

if TYPE_CHECKING:
    from cardarena.server.app import Server
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

INVALID = grpc.StatusCode.INVALID_ARGUMENT
Spoil = Callable[[tpb.CreateTournamentRequest], None]


def _entrants(count: int) -> Spoil:
    def spoil(request: tpb.CreateTournamentRequest) -> None:
        del request.entrants[:]
        for i in range(count):
            request.entrants.add(name=f"e{i}", key=secret())

    return spoil


def _entrant(index: int, *, name: str | None = None, key: str | None = None) -> Spoil:
    def spoil(request: tpb.CreateTournamentRequest) -> None:
        if name is not None:
            request.entrants[index].name = name
        if key is not None:
            request.entrants[index].key = key

    return spoil


def _set(**fields: object) -> Spoil:
    def spoil(request: tpb.CreateTournamentRequest) -> None:
        for name, value in fields.items():
            target = request
            *path, last = name.split("__")
            for part in path:
                target = getattr(target, part)
            setattr(target, last, value)

    return spoil


def _stop(**fields: object) -> Spoil:
    def spoil(request: tpb.CreateTournamentRequest) -> None:
        request.stop.CopyFrom(tpb.SprtRule(a="a", b="b", d0=0.0, d1=1.0))
        for name, value in fields.items():
            setattr(request.stop, name, value)

    return spoil


def _options(**options: Any) -> Spoil:
    def spoil(request: tpb.CreateTournamentRequest) -> None:
        request.options.Clear()
        request.options.update(options)

    return spoil


def _no_time_control(request: tpb.CreateTournamentRequest) -> None:
    request.ClearField("time_control")


def _forfeit_after(count: int) -> Spoil:
    def spoil(request: tpb.CreateTournamentRequest) -> None:
        request.fault_policy.forfeit_after = count

    return spoil


def _many_lineups(request: tpb.CreateTournamentRequest) -> None:
    _entrants(64)(request)  # C(64, 3) lineups of 3 rotations: 124,992 matches for one deal
    request.deals = 1


def _same_key(request: tpb.CreateTournamentRequest) -> None:
    request.entrants[2].key = request.entrants[0].key


BAD_FIELDS: list[tuple[str, Spoil, str]] = [
    ("one entrant", _entrants(1), "entrants"),
    ("no entrants", _entrants(0), "entrants"),
    ("65 entrants", _entrants(65), "entrants"),
    ("duplicate names", _entrant(1, name="a"), "entrants[1].name"),
    ("empty name", _entrant(0, name=""), "entrants[0].name"),
    ("blank name", _entrant(0, name="   "), "entrants[0].name"),
    ("NUL in a name", _entrant(1, name="b\x00"), "entrants[1].name"),
    ("escape in a name", _entrant(1, name="\x1b[31mred"), "entrants[1].name"),
    ("newline in a name", _entrant(2, name="c\nforged log line"), "entrants[2].name"),
    ("C1 control in a name", _entrant(2, name="c\x85"), "entrants[2].name"),
    ("DEL in a name", _entrant(2, name="c\x7f"), "entrants[2].name"),
    ("65-character name", _entrant(0, name="n" * 65), "entrants[0].name"),
    ("short key", _entrant(1, key="k" * 31), "entrants[1].key"),
    ("long key", _entrant(1, key="k" * 129), "entrants[1].key"),
    ("key with a space", _entrant(1, key="k" * 20 + " " + "k" * 20), "entrants[1].key"),
    ("key with a newline", _entrant(1, key="k" * 20 + "\n" + "k" * 20), "entrants[1].key"),
    ("non-ASCII key", _entrant(1, key="\u00e9" * 40), "entrants[1].key"),
    ("duplicate keys", _same_key, "entrants[2].key"),
    ("deals 0", _set(deals=0), "deals"),
    ("too many deals", _set(deals=10_001), "deals"),
    ("concurrency too big", _set(concurrency=257), "concurrency"),
    ("planned-match cap", _many_lineups, "deals"),
    ("move_ms 0", _set(time_control__move_ms=0), "time_control.move_ms"),
    ("move_ms too long", _set(time_control__move_ms=3_600_001), "time_control.move_ms"),
    ("no time control", _no_time_control, "time_control.move_ms"),
    ("bank too long", _set(time_control__bank_ms=3_600_001), "time_control.bank_ms"),
    ("round budget too long", _set(time_control__round_ms=3_600_001), "time_control.round_ms"),
    (
        "increment without a bank",
        _set(time_control__move_ms=0, time_control__increment_ms=100),
        "time_control.increment_ms",
    ),
    ("fallback false", _set(fault_policy__fallback=False), "fault_policy.fallback"),
    ("forfeit_after 0", _forfeit_after(0), "fault_policy.forfeit_after"),
    ("forfeit_after 1001", _forfeit_after(1001), "fault_policy.forfeit_after"),
    ("stop.a unknown", _stop(a="zed"), "stop.a"),
    ("stop.b unknown", _stop(b="zed"), "stop.b"),
    ("stop.a empty", _stop(a=""), "stop.a"),
    ("stop names one entrant twice", _stop(b="a"), "stop.a and stop.b"),
    ("alpha 0.5", _stop(alpha=0.5), "stop.alpha"),
    ("alpha negative", _stop(alpha=-0.01), "stop.alpha"),
    ("alpha NaN", _stop(alpha=math.nan), "stop.alpha"),
    ("beta 1", _stop(beta=1.0), "stop.beta"),
    ("beta NaN", _stop(beta=math.nan), "stop.beta"),
    ("d0 NaN", _stop(d0=math.nan), "stop.d0"),
    ("d1 NaN", _stop(d1=math.nan), "stop.d1"),
    ("d1 infinite", _stop(d1=math.inf), "stop.d1"),
    # Finite, but (mean - d)^2 overflowed: the test raised on every result, stalling it.
    ("d0 huge", _stop(d0=-1e200), "stop.d0"),
    ("d1 huge", _stop(d1=1e200), "stop.d1"),
    ("d1 = d0", _stop(d0=1.0, d1=1.0), "stop.d1"),
    ("d1 < d0", _stop(d0=2.0, d1=-1.0), "stop.d1"),
    ("seed of 31 bytes", _set(seed=b"s" * 31), "seed"),
    ("seed of 33 bytes", _set(seed=b"s" * 33), "seed"),
    ("request_id with a space", _set(request_id="a b"), "request_id"),
    ("request_id too long", _set(request_id="r" * 65), "request_id"),
    ("request_id not ASCII", _set(request_id="\u00e9t\u00e9"), "request_id"),
    ("short creator_secret", _set(creator_secret="c" * 31), "creator_secret"),
    (
        "creator_secret with a tab",
        _set(creator_secret="c" * 20 + "\t" + "c" * 20),
        "creator_secret",
    ),
    ("long name", _set(name="t" * 101), "name"),
    ("control character in the name", _set(name="t\r\n"), "name"),
    ("unknown game", _set(game="nope"), "game"),
    ("no game", _set(game=""), "game"),
    ("players the game has not", _set(players=2), "players"),
    ("players too many", _set(players=4_000_000_000), "players"),
    ("unknown pairing kind", _set(pairings__kind=99), "pairings.kind"),
    ("gauntlet of no candidates", _set(pairings__kind=tpb.PAIRING_KIND_GAUNTLET), "pairings"),
    (
        "gauntlet without a field for the seats",
        _set(pairings__kind=tpb.PAIRING_KIND_GAUNTLET, pairings__candidates=2),
        "pairings: a gauntlet of 3 seats",
    ),
    (
        "candidates outside a gauntlet",
        _set(pairings__kind=tpb.PAIRING_KIND_BALANCED, pairings__candidates=1),
        "pairings: candidates",
    ),
    ("unknown option", _options(bogus=1), "bogus"),
    ("option of the wrong type", _options(max_deals="many"), "max_deals"),
]


def test_every_bad_create_field_is_invalid_argument_naming_it(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        wrong = []
        for label, spoil, field in BAD_FIELDS:
            request = create_request()
            spoil(request)
            error = await failure(tapi.CreateTournament(request, timeout=RPC))
            details = error.details() or ""
            if error.code() != INVALID or field not in details:
                wrong.append((label, error.code().name, details))
            secrets_sent = [e.key for e in request.entrants if len(e.key) >= 8]
            secrets_sent += [request.creator_secret] if request.creator_secret else []
            assert not [s for s in secrets_sent if s in details], (label, details)
        assert not wrong, wrong
        listed = await tapi.ListTournaments(tpb.ListTournamentsRequest(), timeout=RPC)
        assert not listed.tournaments, "a refused request created a tournament"
        assert not server.arena.matches, "a refused request started a match"
        # The valid request they were all spoiled from is accepted.
        created = await tapi.CreateTournament(create_request(), timeout=RPC)
        assert created.tournament.planned == 3

    with_tournaments(data_dir, scenario)


def test_a_locked_server_creates_tournaments_for_its_operator_only(data_dir: Path) -> None:
    operator = secret()

    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, _api: MatchServiceAsyncStub
    ) -> None:
        request = create_request()
        assert await code_of(tapi.CreateTournament(request, timeout=RPC)) == (
            grpc.StatusCode.UNAUTHENTICATED
        )
        for metadata in (
            (("authorization", operator),),  # not "Bearer ..."
            (("authorization", "bearer " + operator),),
        ):
            code = await code_of(tapi.CreateTournament(request, metadata=metadata))
            assert code == grpc.StatusCode.UNAUTHENTICATED, metadata
        for wrong in (secret(), operator[:-1], operator + "x", request.entrants[0].key):
            error = await failure(tapi.CreateTournament(request, metadata=auth(wrong)))
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
            assert wrong not in (error.details() or "")
        assert not server.tournaments.directors
        hosted = await host(tapi, metadata=auth(operator))
        await settled(server, hosted.tournament_id)
        # The creator secret cancels without the operator token.
        cancel = tpb.CancelTournamentRequest(tournament_id=hosted.tournament_id)
        done = await tapi.CancelTournament(cancel, metadata=auth(hosted.creator), timeout=30)
        assert done.tournament.cancelled
        assert done.tournament.status == tpb.TOURNAMENT_STATUS_ENDED
        # The operator may retry a create for the keys the server drew (nobody else may:
        # test_tournament_secrets), with no creator secret to repeat.
        drawn = create_request(keys=["", "", ""], request_id="op-retry")
        first = await tapi.CreateTournament(drawn, metadata=auth(operator), timeout=RPC)
        again = await tapi.CreateTournament(drawn, metadata=auth(operator), timeout=RPC)
        assert list(again.entrant_keys) == list(first.entrant_keys)

    with_tournaments(data_dir, scenario, access=Access(operator_token=operator))


def test_a_flood_of_creates_from_one_address_is_rate_limited(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, api: MatchServiceAsyncStub
    ) -> None:
        bad = create_request()
        bad.deals = 0  # refused after the limit is taken: a flood of nonsense counts too
        codes = []
        retry_after: list[str] = []
        for _ in range(12):
            error = await failure(tapi.CreateTournament(bad, timeout=RPC))
            codes.append(error.code())
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                trailers = dict(error.trailing_metadata() or ())
                value = trailers.get("cardarena-retry-after-ms")
                assert isinstance(value, str) and int(value) > 0, trailers
                retry_after.append(value)
        assert codes[:3] == [INVALID] * 3, codes
        assert codes[3:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 9, codes
        # A valid one is refused too, and it is the same budget as CreateMatch's.
        good = create_request()
        assert await code_of(tapi.CreateTournament(good, timeout=RPC)) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED
        )
        assert await code_of(create_table(api)) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert not server.tournaments.directors

    with_tournaments(data_dir, scenario, access=Access(create_rate=Rate(0.5, 3)))


def test_undecodable_bytes_to_every_tournament_rpc_are_invalid_argument(data_dir: Path) -> None:
    operator = secret()

    async def scenario() -> None:
        access = Access(operator_token=operator)
        async with served(data_dir, access=access) as server, apis(server) as (channel, _, _t):
            for method in TMETHODS:
                expected = f"request is not a valid {method.input_type.full_name} message"
                for payload in GARBAGE:
                    for metadata in ((), auth(operator), auth(secret())):
                        if method.server_streaming:
                            raw: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = (
                                channel.unary_stream(f"/{TSERVICE}/{method.name}")
                            )
                            error = await stream_failure(
                                raw(payload, metadata=metadata, timeout=RPC)
                            )
                            got = (error.code(), error.details())
                        else:
                            code, details, _ = await raw_unary(
                                channel, method.name, payload, metadata=metadata, service=TSERVICE
                            )
                            got = (code, details)
                        assert got == (INVALID, expected), (method.name, payload, metadata)
            assert not server.tournaments.directors

    run(scenario())


def test_list_tournaments_pages_and_refuses_forged_page_tokens(data_dir: Path) -> None:
    async def scenario(
        server: Server, tapi: TournamentServiceAsyncStub, api: MatchServiceAsyncStub
    ) -> None:
        made = [await host(tapi, concurrency=1) for _ in range(5)]
        seen: list[str] = []
        token = ""
        for _ in range(10):
            page = await tapi.ListTournaments(
                tpb.ListTournamentsRequest(page_size=2, page_token=token), timeout=RPC
            )
            assert len(page.tournaments) <= 2
            for info in page.tournaments:
                seen.append(info.tournament_id)
                assert info.status == tpb.TOURNAMENT_STATUS_RUNNING
                assert not info.seed, "a running tournament's seed is listed"
                assert not info.matches
            token = page.next_page_token
            if not token:
                break
        assert sorted(seen) == sorted(h.tournament_id for h in made)
        matches_page = await api.ListMatches(spb.ListMatchesRequest(page_size=1))
        for forged in (
            "garbage",
            "!!!!",
            "\u00e9",
            "A" * 5000,
            "eyJhIjogMX0",  # base64 of a JSON object of another shape
            "W10",  # base64 of []
            made[0].tournament_id,
        ):
            request = tpb.ListTournamentsRequest(page_token=forged)
            error = await failure(tapi.ListTournaments(request, timeout=RPC))
            assert error.code() == INVALID, (forged, error.code(), error.details())
        # A token of ListMatches is no worse than any other: refused or a harmless page.
        try:
            await tapi.ListTournaments(
                tpb.ListTournamentsRequest(page_token=matches_page.next_page_token),
                timeout=RPC,
            )
        except grpc.aio.AioRpcError as refused:
            assert refused.code() == INVALID, refused
        for size in (1001, 4_000_000_000):
            error = await failure(tapi.ListTournaments(tpb.ListTournamentsRequest(page_size=size)))
            assert error.code() == INVALID and "page_size" in (error.details() or "")
        unknown = tpb.GetTournamentRequest(tournament_id="0123456789abcdef")
        assert await code_of(tapi.GetTournament(unknown)) == grpc.StatusCode.NOT_FOUND
        for bad_id in ("", "'; DROP TABLE tournaments; --", "x" * 5000, "\u4e2d"):
            get = tpb.GetTournamentRequest(tournament_id=bad_id)
            assert await code_of(tapi.GetTournament(get)) == grpc.StatusCode.NOT_FOUND
        assert len(server.tournaments.directors) == 5

    with_tournaments(data_dir, scenario)
