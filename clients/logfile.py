"""Match log files: the ``GetMatchLogResponse`` message, kept as it came from the server.

Why the response itself: it already holds everything an auditor needs (the exact stored
bytes of every event, their chained hashes, the revealed seed and the server's summary of the
match), so a file is never a re-encoding that could hide what the server actually signed.

* ``.pb``: the binary protobuf message, byte for byte;
* ``.json``: the protobuf JSON mapping (bytes in base64), for reading and diffing by hand.

Any other suffix is read by sniffing (JSON starts with ``{``) and written as binary.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from cardarena.engine import Match
from cardarena.engine.match import ActionReader
from cardarena.v1 import codec, service_pb2_grpc
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.chain import chain_hash, genesis_hash

from .client import CHANNEL_OPTIONS, channel_target

FETCH_TIMEOUT_S = 30.0


class LogUnavailable(Exception):
    """The log could not be read at all (missing file, not a log, a failed fetch): unlike an
    audit failure, this says nothing about the match, only about the input."""


def load_log(path: str | Path) -> spb.GetMatchLogResponse:
    """Read a log file written by :func:`save_log` (or by anyone following the format)."""
    source = Path(path)
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        raise LogUnavailable(f"{source}: no such file") from None
    except OSError as error:
        raise LogUnavailable(f"{source}: cannot read: {error.strerror or error}") from None
    if _is_json(source, data):
        resp = _parse_json(source, data)
    else:
        resp = spb.GetMatchLogResponse()
        try:
            resp.ParseFromString(data)
        except DecodeError:
            raise LogUnavailable(
                f"{source}: not a match log (not a GetMatchLogResponse protobuf message)"
            ) from None
    if not resp.HasField("match") and not resp.entries:
        raise LogUnavailable(f"{source}: not a match log (no match and no entries)")
    return resp


def _is_json(path: Path, data: bytes) -> bool:
    if path.suffix == ".json":
        return True
    return path.suffix != ".pb" and data.lstrip()[:1] == b"{"


def _parse_json(source: Path, data: bytes) -> spb.GetMatchLogResponse:
    try:
        text = data.decode("utf-8")
        json.loads(text)  # tell plain bad JSON apart from JSON that is not a log
    except (UnicodeDecodeError, ValueError) as error:
        raise LogUnavailable(f"{source}: bad JSON: {error}") from None
    try:
        return json_format.Parse(text, spb.GetMatchLogResponse())
    except json_format.ParseError as error:
        raise LogUnavailable(f"{source}: not a match log: {error}") from None


def save_log(resp: spb.GetMatchLogResponse, path: str | Path) -> None:
    """Write ``resp`` as JSON for a ``.json`` path, as binary protobuf otherwise."""
    target = Path(path)
    if target.suffix == ".json":
        text = json_format.MessageToJson(resp, indent=1, preserving_proto_field_name=True)
        target.write_text(text + "\n", encoding="utf-8")
    else:
        target.write_bytes(resp.SerializeToString())


async def fetch_log(
    address: str, match_id: str, *, timeout: float = FETCH_TIMEOUT_S
) -> spb.GetMatchLogResponse:
    """``GetMatchLog`` from a server; refusals (unknown match, not ended, unreachable) raise
    :class:`LogUnavailable` with the status code and the server's message."""
    async with grpc.aio.insecure_channel(
        channel_target(address), options=CHANNEL_OPTIONS
    ) as channel:
        api = service_pb2_grpc.MatchServiceStub(channel)
        try:
            return await api.GetMatchLog(spb.GetMatchLogRequest(match_id=match_id), timeout=timeout)
        except grpc.aio.AioRpcError as error:
            raise LogUnavailable(
                f"{address}: cannot fetch the log of match {match_id!r}: "
                f"{error.code().name}: {error.details()}"
            ) from None


def log_from_engine(
    match: Match,
    seed: bytes,
    match_id: str,
    *,
    names: Sequence[str] | None = None,
    timed_out: Collection[int] = (),
    move_ms: int = 0,
    created_unix_ms: int = 0,
    reserved: Sequence[bool] | None = None,
    cancelled: str | None = None,
    seated: Collection[int] | None = None,
) -> spb.GetMatchLogResponse:
    """The log a server would return for the finished engine ``match``, built the server's way.

    Why: tests and offline tools need real logs without a server. The order of entries is the
    server's: the events of match creation (MatchStarted carrying ``move_ms`` and one
    ``reserved`` flag per seat, default none reserved; ``reserved=()`` writes no flags, as a
    log from before reservations), one ``SeatJoined`` per seat of ``seated`` (default every
    seat; ``names``, default ``seat N``), every later event at ``seq`` from 1 on, a
    ``TimedOut`` before each action whose index in ``match.log`` is in ``timed_out``, then
    ``MatchCancelled`` if ``cancelled`` gives its reason (the match need not be over then),
    and ``SeedRevealed`` last.
    """
    if cancelled is None and not match.over:
        raise ValueError("the match has not ended: its log and seed are not public yet")
    if cancelled is not None and match.over:
        raise ValueError("the match has ended: it cannot be cancelled")
    seat_names = list(names) if names is not None else [f"seat {s}" for s in range(match.players)]
    if len(seat_names) != match.players:
        raise ValueError(f"{len(seat_names)} names for {match.players} seats")
    flags = [False] * match.players if reserved is None else list(reserved)
    if flags and len(flags) != match.players:
        raise ValueError(f"{len(flags)} reserved flags for {match.players} seats")
    joined = sorted(set(range(match.players) if seated is None else seated))
    reader = ActionReader()
    recorded_at = [reader(e) for e in match.log]
    actions = [i for i, recorded in enumerate(recorded_at) if recorded is not None]
    if actions and len(joined) < match.players:
        raise ValueError("play cannot start before every seat has joined")
    # Seats join before the first action, or after the opening events if there is none.
    joins_at = actions[0] if actions else len(match.log)
    events: list[pb.Event] = []
    for index, event in enumerate([*match.log, None]):
        if index == joins_at:
            events += [
                pb.Event(seat_joined=pb.SeatJoined(seat=s, name=seat_names[s])) for s in joined
            ]
        if event is None:
            break
        if index in timed_out:
            recorded = recorded_at[index]
            if recorded is None:
                raise ValueError(f"event {index} is not an action: it cannot follow a time-out")
            events.append(pb.Event(timed_out=pb.TimedOut(seat=recorded[0])))
        events.append(codec.event_to_pb(event, 0, match_id, move_ms=move_ms, reserved_seats=flags))
    if cancelled is not None:
        totals = [codec.score_to_pb(t) for t in match.totals]
        events.append(pb.Event(match_cancelled=pb.MatchCancelled(reason=cancelled, totals=totals)))
    events.append(pb.Event(seed_revealed=pb.SeedRevealed(seed=seed)))
    entries: list[spb.LogEntry] = []
    prev = genesis_hash(match_id)
    for seq, message in enumerate(events, start=1):
        message.seq = seq
        payload = message.SerializeToString()
        prev = chain_hash(prev, payload)
        entries.append(spb.LogEntry(seq=seq, event=payload, hash=prev))
    started = events[0].match_started
    seats = [
        spb.SeatInfo(
            seat=s,
            taken=s in joined,
            name=seat_names[s] if s in joined else "",
            reserved=bool(flags) and flags[s],
        )
        for s in range(match.players)
    ]
    info = spb.MatchInfo(
        match_id=match_id,
        game=started.game,
        players=started.players,
        options=started.options,
        status=spb.MATCH_STATUS_ENDED,
        seats=seats,
        created_unix_ms=created_unix_ms,
        seed_commitment=started.seed_commitment,
        last_seq=len(entries),
        time_control=spb.TimeControl(move_ms=move_ms),
        totals=[codec.score_to_pb(t) for t in match.totals],
        winners=list(match.winners),
        seed=seed,
        last_hash=entries[-1].hash,
        cancelled=cancelled is not None,
    )
    return spb.GetMatchLogResponse(match=info, entries=entries, seed=seed)
