"""Fuzzing every RPC of a real server with live matches (issue 10, "what done looks like").

At least 5,000 requests, from a fixed seed, over every method of MatchService and of
TournamentService (aimed at a live tournament whose entrants stay connected): messages
built at random from the protobuf descriptors (field values drawn from the real match ids,
seats and secrets as well as from edge cases), serialized valid requests with bits flipped,
bytes cut, inserted or repeated, plain random bytes, and random credentials in the metadata.
Asserted throughout:

* no answer is UNKNOWN or INTERNAL (or DEADLINE_EXCEEDED: the server always answers);
* no secret (a seat token, the operator token, a creator or join secret, the seed of a match
  that has not ended) and no card of another seat's hidden hand is in any error message or
  in-stream ActionResult (whatever the request itself carried is taken out first);
* a refused request changes nothing: every live match's last seq, last hash, seats and
  status are what they were after the last request that was accepted; the tournament's
  matches never change (no request may touch them), and it is never cancelled;

and at the end: the process is alive, health says SERVING, a normal match is played to its
end and audits clean, the log has no ERROR line and no secret, and SIGTERM exits 0.
Bounded by count (``REQUESTS``) and by a wall-clock cap (``CAP_SECONDS``).

What is sent, the live state it is aimed at, and the checks are in ``fuzz_support``; the
requests are drawn by ``fuzz_requests.Fuzzer``.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2

from cardarena.clients.audit import audit_log
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..calls import auth, health_check
from ..serverproc import ServerProcess, log_records
from .fuzz_requests import Fuzzer
from .fuzz_support import (
    METHODS,
    MUTATING,
    Live,
    Sent,
    leaks,
    refresh,
    send,
    state_of,
    targets,
    turn,
    unchanged,
)
from .support import channel_to, create_table, play_out_over_play, secret
from .tournaments import LONG_MOVE, Entry, create_request, enter, tstub

REQUESTS = 5000
CAP_SECONDS = 40.0
SEED = 20261201
CHECK_EVERY = 25
"""Requests between two checks that nothing changed."""
CREATING = frozenset({"CreateMatch", "CreateTournament"})
FORBIDDEN = frozenset(
    {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DEADLINE_EXCEEDED}
)
DEPTH = {
    "OK",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "UNAUTHENTICATED",
    "PERMISSION_DENIED",
    "FAILED_PRECONDITION",
    "ALREADY_EXISTS",
}

# --------------------------------------------------------------------------- the test


async def setup_tournament(channel: grpc.aio.Channel, api: Any, live: Live) -> list[Entry]:
    """A running tournament (three matches, no clock to speak of) whose every entrant stays
    connected throughout: the fuzzer's own Enter calls, with real keys, then never leave an
    entrant disconnected (which would log faults, as it should)."""
    tapi = tstub(channel)
    tourney = live.tourney
    tourney.keys = [secret() for _ in range(3)]
    tourney.creator = secret()
    created = await tapi.CreateTournament(
        create_request(keys=tourney.keys, creator_secret=tourney.creator, move_ms=LONG_MOVE),
        metadata=auth(live.operator),
        timeout=5,
    )
    tourney.tournament_id = created.tournament.tournament_id
    entries = [enter(tapi, tourney.tournament_id, key) for key in tourney.keys]
    for entry in entries:
        tourney.tokens += [m.token for m in await entry.until_matches(3)]
        tourney.matches.update({m.match_id: () for m in entry.seats()})
    for match_id in tourney.matches:  # held back from all but its seats and the operator
        asked = spb.GetMatchRequest(match_id=match_id)
        info = (await api.GetMatch(asked, metadata=auth(live.operator), timeout=5)).match
        tourney.matches[match_id] = state_of(info)
    return entries


async def setup(api: Any, address: str, live: Live) -> None:
    """Two running matches a few moves in, one waiting on reserved seats, one ended."""
    operator = auth(live.operator)
    creators = [secret() for _ in range(3)]
    running = [
        await create_table(api, metadata=operator, creator_secret=creators[0]),
        await create_table(api, "heptathlon", 4, metadata=operator, creator_secret=creators[1]),
    ]
    reserved = {s: secret() for s in range(3)}
    waiting = await create_table(
        api, metadata=operator, reserved=reserved, seat_all=False, creator_secret=creators[2]
    )
    finished = await create_table(api, metadata=operator)
    await play_out_over_play(address, finished)
    live.join_secrets += reserved.values()
    for table, creator in zip((*running, waiting), creators, strict=True):
        live.creators[table.match_id] = creator
    for table in (*running, waiting, finished):
        live.tables[table.match_id] = table
    for table in running:
        for _ in range(3):  # a few moves, so the hands differ from the deal
            seat, seq, legal = await turn(api, table)
            await api.SubmitAction(
                spb.SubmitActionRequest(
                    match_id=table.match_id, seat=seat, action=legal[0], expected_seq=seq
                ),
                metadata=auth(table.tokens[seat]),
                timeout=5,
            )
    await refresh(api, live)


def test_fuzzing_every_rpc_breaks_nothing_and_leaks_nothing(data_dir: Path) -> None:
    live = Live(operator=secret())
    extra = [f"--admin-token={live.operator}", "--create-rate", "0", "--join-rate", "0"]
    counts: dict[str, int] = {}
    codes: dict[str, int] = {}

    async def scenario(address: str) -> int:
        async with channel_to(address) as (channel, api):
            await setup(api, address, live)
            entries = await setup_tournament(channel, api, live)
            fuzzer = Fuzzer(random.Random(SEED), live)
            started = time.monotonic()
            window: list[Sent] = []
            sent_count = 0
            while sent_count < REQUESTS and time.monotonic() - started < CAP_SECONDS:
                sent = fuzzer.next(sent_count)
                answer = await send(channel, sent)
                sent_count += 1
                window.append(sent)
                counts[sent.method.name] = counts.get(sent.method.name, 0) + 1
                codes[answer.code.name] = codes.get(answer.code.name, 0) + 1
                assert answer.code not in FORBIDDEN, (sent, answer)
                assert not leaks(live, sent, answer), (sent, leaks(live, sent, answer))
                assert not (answer.accepted and sent.method.name == "CancelTournament"), sent
                if answer.accepted and sent.method.name in MUTATING - CREATING:
                    # Only the match it names may have changed; then look at all afresh.
                    await unchanged(api, live, window, but=targets(sent))
                    await refresh(api, live)
                    window = []
                elif len(window) >= CHECK_EVERY:
                    await unchanged(api, live, window)
                    window = []
            await unchanged(api, live, window)
            tapi = tstub(channel)
            got = await tapi.GetTournament(
                tpb.GetTournamentRequest(tournament_id=live.tourney.tournament_id), timeout=5
            )
            assert got.tournament.status == tpb.TOURNAMENT_STATUS_RUNNING
            assert not got.tournament.cancelled and got.tournament.started == 3
            for entry in entries:  # still connected, not dropped
                assert not entry.call.done()
                entry.cancel()

            # Still serving, and a normal match still plays to its end and audits clean.
            health = await health_check(channel)(health_pb2.HealthCheckRequest(), timeout=5)
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            table = await create_table(api, metadata=auth(live.operator))
            await play_out_over_play(address, table)
            log = await api.GetMatchLog(spb.GetMatchLogRequest(match_id=table.match_id))
            report = audit_log(log)
            assert report.ok, report.failure
            return sent_count

    with ServerProcess(data_dir, extra=extra) as server:
        assert server.process is not None
        sent_count = asyncio.run(asyncio.wait_for(scenario(server.address), CAP_SECONDS + 40))
        assert server.process.poll() is None, "the server died"
        assert server.terminate() == 0
    assert sent_count >= REQUESTS, f"only {sent_count} requests in {CAP_SECONDS} s"
    assert set(counts) == {m.name for m in METHODS}, counts
    # Deep enough to meet every kind of refusal, not only the decoder's.
    assert set(codes) >= DEPTH, codes
    text = server.stderr_path.read_text()
    faults = [r for r in log_records(server.stderr_path) if r.get("level") in ("error", "critical")]
    assert not faults, faults[:3]
    for hidden in live.secrets():
        assert hidden not in text, "a secret is in the server's log"
