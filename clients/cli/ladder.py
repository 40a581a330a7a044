"""``cardarena ladder``: open a ladder, follow its board, keep a signed snapshot, close it.

A ladder never ends by itself (docs/ladders.md): its entrants connect with ``cardarena bot
connect --ladder ID`` and stay; the server keeps scheduling duplicate groups among those
connected now and keeps a board of ratings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shlex
import sys
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient
from ..client.ladders import Snapshot
from ..tournament.invitations import file_stems
from ..tournament.terminal import print_error
from .access import add_operator, add_server, operator_token, secret_file, write_secret
from .argtypes import MAX_CONCURRENCY, MAX_FORFEIT_AFTER, MAX_MOVE_MS, json_object, whole

PROG = "cardarena ladder"


def configure(name: str, parser: argparse.ArgumentParser) -> Any:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    _create(actions.add_parser("create", help="open a ladder for named entrants"))
    _board(actions.add_parser("board", help="the board now: ratings, games, who is connected"))
    _snapshot(actions.add_parser("snapshot", help="a signed snapshot, to audit"))
    _close(actions.add_parser("close", help="stop scheduling (the board stays)"))
    return lambda args: args.run_action(args)


def _create(parser: argparse.ArgumentParser) -> None:
    add_server(parser)
    add_operator(parser)
    parser.add_argument("--game", required=True, help="the game, e.g. triathlon")
    parser.add_argument(
        "--players", type=whole(1, 8, zero="the game's default"), default=0, help="seats"
    )
    parser.add_argument("--options", type=json_object, default={}, help="game options as JSON")
    parser.add_argument(
        "--entrant",
        action="append",
        required=True,
        metavar="NAME",
        help="an entrant (2 to 64; repeat)",
    )
    for flag, default, what in (
        ("--move-ms", 10_000, "the time per move (0: none, with a bank or a round budget)"),
        ("--bank-ms", 0, "each seat's bank per match, as in chess (0: none)"),
        ("--increment-ms", 0, "added to a bank after each action in time (0: none)"),
        ("--round-ms", 0, "each seat's budget per round (0: none)"),
    ):
        parser.add_argument(
            flag,
            type=whole(1, MAX_MOVE_MS, zero="none"),
            default=default,
            metavar="MS",
            help=f"{what} (default: %(default)s)",
        )
    parser.add_argument(
        "--concurrency",
        type=whole(1, MAX_CONCURRENCY),
        default=4,
        help="matches in play at once (default: %(default)s)",
    )
    parser.add_argument(
        "--forfeit-after",
        type=whole(1, MAX_FORFEIT_AFTER, zero="never"),
        default=3,
        help="faults in a match after which a seat forfeits it (0: never; default: 3)",
    )
    parser.add_argument("--name", default="", help="the ladder's name, for people")
    parser.add_argument(
        "--keys",
        type=Path,
        required=True,
        metavar="DIR",
        help="a new folder: one NAME.key file (mode 0600) per entrant, to send it with the"
        " command printed for it",
    )
    parser.add_argument(
        "--creator-secret-file",
        type=Path,
        metavar="FILE",
        help="keep a secret that may close the ladder in this new file",
    )
    parser.set_defaults(run_action=_run_create)


def _run_create(args: argparse.Namespace) -> int:
    if not (args.move_ms or args.bank_ms or args.round_ms):
        return _refuse("a ladder needs a clock: --move-ms, --bank-ms or --round-ms")
    if len(set(args.entrant)) != len(args.entrant) or not 2 <= len(args.entrant) <= 64:
        return _refuse("give 2 to 64 entrants, each name once (--entrant NAME)")
    try:
        args.keys.mkdir(mode=0o700)
    except OSError as error:
        return _refuse(f"cannot make {args.keys}: {error.strerror or error}")
    creator = secrets.token_urlsafe(32) if args.creator_secret_file else ""
    request = lpb.CreateLadderRequest(
        name=args.name,
        game=args.game,
        players=args.players,
        time_control=spb.TimeControl(
            move_ms=args.move_ms,
            bank_ms=args.bank_ms,
            increment_ms=args.increment_ms,
            round_ms=args.round_ms,
        ),
        entrants=[tpb.EntrantSpec(name=name) for name in args.entrant],
        concurrency=args.concurrency,
        creator_secret=creator,
    )
    request.options.update(args.options)
    if args.forfeit_after:
        request.fault_policy.forfeit_after = args.forfeit_after
    else:
        request.fault_policy.fallback = True

    async def create() -> lpb.CreateLadderResponse:
        token = operator_token(args)
        async with ArenaClient(args.server, operator_token=token) as client:
            return await client.ladders.create(request)

    try:
        created = asyncio.run(create())
    except (grpc.aio.AioRpcError, ValueError) as error:
        return _failed(args.server, error)
    ladder_id = created.ladder.ladder_id
    if args.creator_secret_file:
        write_secret(args.creator_secret_file, creator)
    for name, key, stem in zip(
        args.entrant, created.entrant_keys, file_stems(args.entrant), strict=True
    ):
        write_secret(args.keys / f"{stem}.key", key)
        argv = ["cardarena", "bot", "connect", "--server", args.server, "--ladder", ladder_id]
        argv += ["--key-file", f"{stem}.key"]
        print(f"# {name}: in {args.keys}, with BOT its bot:", file=sys.stderr)
        print(f"#   {shlex.join(argv)} BOT", file=sys.stderr)
    print(ladder_id)
    return 0


def _ladder_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ladder_id", metavar="ID", help="the ladder's id")
    add_server(parser)


def _board(parser: argparse.ArgumentParser) -> None:
    _ladder_id(parser)
    parser.add_argument("--json", action="store_true", help="print LadderInfo as JSON")
    parser.set_defaults(run_action=_run_board)


def _run_board(args: argparse.Namespace) -> int:
    async def get() -> lpb.LadderInfo:
        async with ArenaClient(args.server) as client:
            return await client.ladders.get(args.ladder_id)

    try:
        info = asyncio.run(get())
    except grpc.aio.AioRpcError as error:
        return _failed(args.server, error)
    if args.json:
        print(json_format.MessageToJson(info, preserving_proto_field_name=True))
        return 0
    status = "closed" if info.status == lpb.LADDER_STATUS_CLOSED else "running"
    print(
        f"ladder {info.ladder_id} {info.name or ''} ({info.game}, {info.players} seats): {status},"
        f" {info.running} running"
    )
    print(totals(info))
    print(f"{'player':<24} {'rating':>7} {'mu':>7} {'sigma':>6} {'games':>6} {'mean':>8}  state")
    for row in info.board:
        state = "retired" if row.retired else "connected" if row.connected else "away"
        mean = f"{row.mean:8.2f}" if row.has_mean else f"{'-':>8}"
        print(
            f"{row.player:<24} {row.ordinal:7.2f} {row.mu:7.2f} {row.sigma:6.2f}"
            f" {row.matches:6d} {mean}  {state}"
        )
    return 0


def _snapshot(parser: argparse.ArgumentParser) -> None:
    _ladder_id(parser)
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="where the snapshot goes (JSON: the board, every counted match, the signature),"
        " for cardarena audit --ladder FILE",
    )
    parser.set_defaults(run_action=_run_snapshot)


def _run_snapshot(args: argparse.Namespace) -> int:
    async def get() -> Snapshot:
        async with ArenaClient(args.server) as client:
            return await client.ladders.snapshot(args.ladder_id)

    try:
        taken = asyncio.run(get())
    except grpc.aio.AioRpcError as error:
        return _failed(args.server, error)
    try:
        args.out.write_text(json.dumps(snapshot_json(taken, args.server), indent=1) + "\n")
    except OSError as error:
        return _refuse(f"cannot write {args.out}: {error.strerror or error}")
    ladder = taken.snapshot.ladder
    signed = "signed" if taken.signature is not None else "unsigned (the server has no key)"
    print(f"{args.out}: ladder {ladder.ladder_id}, {signed}")
    print(totals(ladder))
    return 0


def totals(info: lpb.LadderInfo) -> str:
    """What a board counts, in one line: matches (and those voided), complete duplicate
    groups, players (and those retired) of how many entrants. Every number is the signed
    board's own or follows from it; ``cardarena audit --ladder`` recomputes each from the logs
    but the retired and the entrants, which only the signature vouches for."""
    groups = info.counted // max(info.players, 1)
    retired = sum(row.retired for row in info.board)
    players = f"{len(info.board)} players on the board"
    if retired:
        players += f" ({retired} retired)"
    return (
        f"{_plural(info.counted, 'match', 'matches')} counted ({info.voided} voided) in"
        f" {_plural(groups, 'duplicate group', 'duplicate groups')}, {players},"
        f" {_plural(len(info.entrants), 'entrant', 'entrants')}"
    )


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def snapshot_json(taken: Snapshot, server: str) -> dict[str, Any]:
    """A snapshot as its file keeps it: the protocol's messages as JSON, exactly."""
    out: dict[str, Any] = {
        "server": server,
        "snapshot": json_format.MessageToDict(taken.snapshot, preserving_proto_field_name=True),
        "matches": [
            json_format.MessageToDict(m, preserving_proto_field_name=True) for m in taken.matches
        ],
    }
    if taken.signature is not None:
        out["signature"] = json_format.MessageToDict(
            taken.signature, preserving_proto_field_name=True
        )
    return out


def snapshot_of(data: dict[str, Any]) -> Snapshot:
    """A snapshot file read back (``ValueError``: not one)."""
    try:
        made = json_format.ParseDict(data["snapshot"], lpb.LadderSnapshot())
        matches = [json_format.ParseDict(m, lpb.LadderMatch()) for m in data["matches"]]
        signature = (
            json_format.ParseDict(data["signature"], spb.ResultsSignature())
            if "signature" in data
            else None
        )
    except (KeyError, TypeError, json_format.ParseError) as error:
        raise ValueError(f"not a ladder snapshot file: {error}") from None
    return Snapshot(made, matches, signature)


def _close(parser: argparse.ArgumentParser) -> None:
    _ladder_id(parser)
    add_operator(parser)
    parser.add_argument("--reason", default="", help="recorded in every voided match")
    parser.add_argument(
        "--creator-secret-file", type=secret_file, metavar="FILE", help="the creator secret"
    )
    parser.set_defaults(run_action=_run_close)


def _run_close(args: argparse.Namespace) -> int:
    async def close() -> lpb.LadderInfo:
        token = operator_token(args)
        async with ArenaClient(args.server, operator_token=token) as client:
            return await client.ladders.close(
                args.ladder_id, reason=args.reason, secret=args.creator_secret_file
            )

    try:
        info = asyncio.run(close())
    except (grpc.aio.AioRpcError, ValueError) as error:
        return _failed(args.server, error)
    print(f"ladder {info.ladder_id} closed: {info.counted} matches counted, {info.running} running")
    return 0


def _refuse(text: str) -> int:
    print_error(PROG, text)
    return 2


def _failed(server: str, error: Exception) -> int:
    if isinstance(error, grpc.aio.AioRpcError):
        print_error(PROG, f"{server}: {error.code().name}: {error.details()}")
        return 1
    print_error(PROG, str(error))
    return 2
