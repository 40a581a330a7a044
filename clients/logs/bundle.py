"""Many logs at once: every match of a tournament (or of a results file), fetched from a server
or read from a directory of log files, and the tournament itself beside them.

The directory layout (docs/log-files.md): one ``MATCH_ID.pb`` (or ``.json``) per match, each a
``GetMatchLogResponse`` as :mod:`.files` writes it (checkpoint included), and
``tournament.pb`` (or ``.json``): the ``TournamentInfo`` of ``GetTournament`` with every
match, its results signature included. Why the server's messages as they came: a file is
never a re-encoding that could hide what the server signed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..client import ArenaClient
from .files import LogUnavailable, load_log, options_json, save_log

PARALLEL: Final = 8
"""Logs fetched at once."""
TOURNAMENT_FILE: Final = "tournament"

Fetched = dict[str, spb.GetMatchLogResponse | LogUnavailable]
"""Each match's log, or why it could not be had."""


async def fetch_logs(client: ArenaClient, match_ids: Iterable[str]) -> Fetched:
    """Every log, :data:`PARALLEL` at a time; a refusal is kept as the match's entry."""
    gate = asyncio.Semaphore(PARALLEL)

    async def one(match_id: str) -> spb.GetMatchLogResponse | LogUnavailable:
        async with gate:
            try:
                return await client.match_log(match_id)
            except grpc.aio.AioRpcError as error:  # a refusal, or the retries running out
                return LogUnavailable(
                    f"cannot fetch the log of match {match_id!r}:"
                    f" {error.code().name}: {error.details()}"
                )

    ids = list(dict.fromkeys(match_ids))
    return dict(zip(ids, await asyncio.gather(*(one(m) for m in ids)), strict=True))


def read_logs(directory: Path, match_ids: Iterable[str]) -> Fetched:
    """Every log from ``directory`` (``MATCH_ID.pb``, else ``MATCH_ID.json``)."""
    found: Fetched = {}
    for match_id in dict.fromkeys(match_ids):
        path = log_path(directory, match_id, "pb")
        if not path.exists():
            path = log_path(directory, match_id, "json")
        try:
            found[match_id] = load_log(path)
        except LogUnavailable as error:
            found[match_id] = error
    return found


def log_path(directory: Path, match_id: str, suffix: str) -> Path:
    if not match_id or "/" in match_id or match_id.startswith("."):
        raise LogUnavailable(f"{match_id!r} is not a match id a file can be named after")
    return directory / f"{match_id}.{suffix}"


def save_logs(logs: Fetched, directory: Path, suffix: str) -> list[Path]:
    """Write each fetched log as ``MATCH_ID.SUFFIX``; the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for match_id, log in logs.items():
        if isinstance(log, spb.GetMatchLogResponse):
            path = log_path(directory, match_id, suffix)
            save_log(log, path)
            written.append(path)
    return written


def save_tournament(info: tpb.TournamentInfo, directory: Path, suffix: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{TOURNAMENT_FILE}.{suffix}"
    if suffix == "json":
        data = json_format.MessageToDict(info, preserving_proto_field_name=True)
        if "options" in data:
            data["options"] = options_json(info.options)
        path.write_text(json.dumps(data, indent=2) + "\n")
    else:
        path.write_bytes(info.SerializeToString(deterministic=True))
    return path


def load_tournament(path: Path) -> tpb.TournamentInfo:
    """A tournament file written by :func:`save_tournament`."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LogUnavailable(f"{path}: cannot read: {error.strerror or error}") from None
    info = tpb.TournamentInfo()
    try:
        if path.suffix == ".json" or data.lstrip()[:1] == b"{":
            json_format.Parse(data.decode("utf-8"), info)
        else:
            info.ParseFromString(data)
    except (DecodeError, json_format.ParseError, UnicodeDecodeError, json.JSONDecodeError):
        raise LogUnavailable(f"{path}: not a tournament (TournamentInfo) file") from None
    if not info.tournament_id:
        raise LogUnavailable(f"{path}: not a tournament (TournamentInfo) file")
    return info
