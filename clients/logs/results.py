"""A results file (``cardarena tournament --json``) as an auditor reads it.

Why the file carries the server's ``TournamentInfo`` itself (``tournament_info_pb``, base64):
its signature covers exact values (the standings' doubles, every last hash), which the
readable fields round or re-spell; the readable part is checked against it. A file written
before results were signed has no such field: then the tournament is fetched from its server
and the file's pins are checked against what the server says now.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from google.protobuf.message import DecodeError

from cardarena.v1 import tournament_pb2 as tpb

from .files import LogUnavailable

INFO_FIELD: Final = "tournament_info_pb"


@dataclass(frozen=True)
class ResultsFile:
    """A results file, checked for form: the tournament, its server, its logs' pins."""

    path: Path
    tournament_id: str
    server: str
    pins: dict[str, str]
    """Each match id's last hash as the file records it (hex)."""
    info: tpb.TournamentInfo | None
    """The server's message embedded in the file, if it has one."""
    readable: dict[str, Any] = field(default_factory=dict)
    """Everything else the file says, as read: what ``cardarena audit --results`` holds to
    what the signed message gives (:func:`readable_differences`)."""


def info_field(info: tpb.TournamentInfo) -> str:
    """What the writer of a results file puts under :data:`INFO_FIELD`."""
    return base64.b64encode(info.SerializeToString(deterministic=True)).decode("ascii")


def once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose every key appears once: with a key twice, readers differ on which
    one counts (Python, jq and node take the last, others the first), so a forged value put
    before the genuine one would be shown by some and audited by none."""
    made: dict[str, Any] = {}
    for key, value in pairs:
        if key in made:
            raise ValueError(f"the key {key!r} appears twice in one object")
        made[key] = value
    return made


def load_results(path: Path) -> ResultsFile:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=once_each)
    except FileNotFoundError:
        raise LogUnavailable(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise LogUnavailable(f"{path}: not a results file: {error}") from None
    try:
        head = data["tournament"]
        tournament_id = str(head["id"])
        pins = {str(m["match_id"]): str(m["last_hash"]) for m in data["matches"] if m["match_id"]}
    except (KeyError, TypeError) as error:
        raise LogUnavailable(
            f"{path}: not a results file of cardarena tournament --json (no {error})"
        ) from None
    info = None
    if INFO_FIELD in data:
        info = tpb.TournamentInfo()
        try:
            info.ParseFromString(base64.b64decode(data[INFO_FIELD], validate=True))
        except (binascii.Error, DecodeError, TypeError, ValueError):
            raise LogUnavailable(f"{path}: its {INFO_FIELD} is not a TournamentInfo") from None
    readable = {key: value for key, value in data.items() if key != INFO_FIELD}
    return ResultsFile(path, tournament_id, str(head.get("server", "")), pins, info, readable)


def shape(path: str) -> str:
    """A field's path with its list indices dropped: ``matches[3].status`` is
    ``matches[].status``, the same field in every entry."""
    return re.sub(r"\[\d+\]", "[]", path)


def field_shapes(value: Any, where: str = "") -> frozenset[str]:
    """The :func:`shape` of every field present anywhere in ``value``."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            found.add(shape(path))
            found |= field_shapes(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found |= field_shapes(item, f"{where}[{index}]")
    return frozenset(found)


def readable_differences(
    expected: Any, found: Any, where: str = "", *, optional: frozenset[str] = frozenset()
) -> Iterator[str]:
    """Where ``found`` (a results file's readable part) differs from ``expected`` (what the
    writer makes of the signed message): one line per differing field, named by its path.
    A field whose :func:`shape` is in ``optional`` may be missing (an older writer did not
    write it)."""
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in expected.keys() | found.keys():
            path = f"{where}.{key}" if where else str(key)
            if key not in found:
                if shape(path) not in optional:
                    yield f"{path} is missing"
            elif key not in expected:
                yield f"{path} is no field of a results file"
            else:
                yield from readable_differences(expected[key], found[key], path, optional=optional)
    elif isinstance(expected, list) and isinstance(found, list):
        if len(expected) != len(found):
            yield f"{where} has {len(found)} entries, the signed results {len(expected)}"
        for index, (mine, theirs) in enumerate(zip(expected, found, strict=False)):
            yield from readable_differences(mine, theirs, f"{where}[{index}]", optional=optional)
    elif type(expected) is not type(found) or expected != found:
        yield f"{where} is {_shown(found)}, the signed results say {_shown(expected)}"


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."
