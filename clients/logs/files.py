"""Match log files: the ``GetMatchLogResponse`` message, kept as it came from the server.

Why the response itself: it already holds everything an auditor needs (the exact stored
bytes of every event, their chained hashes, the revealed seed and the server's summary of the
match), so a file is never a re-encoding that could hide what the server actually signed.

* ``.pb``: the binary protobuf message, byte for byte;
* ``.json``: the protobuf JSON mapping (bytes in base64), for reading and diffing by hand,
  with MatchInfo's options as the game's whole numbers (``"max_deals": 50``, not the ``50.0``
  of a Struct's doubles) and their keys sorted. Read back, they are the same doubles: the
  same message, and nothing hashed or signed is touched (the events' exact bytes, MatchStarted's
  options among them, are base64 like every other entry; MatchInfo is in no hash).

Any other suffix is read by sniffing (JSON starts with ``{``) and written as binary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2
from google.protobuf.message import DecodeError

from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb


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
    """Write ``resp`` as JSON for a ``.json`` path, as binary protobuf otherwise; the same
    log always as the same bytes."""
    target = Path(path)
    if target.suffix == ".json":
        data = json_format.MessageToDict(resp, preserving_proto_field_name=True)
        info = data.get("match", {})
        if "options" in info:
            info["options"] = options_json(resp.match.options)
        target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    else:
        target.write_bytes(resp.SerializeToString(deterministic=True))


def options_json(options: struct_pb2.Struct) -> dict[str, Any]:
    """Options as a file shows them: whole numbers as integers (a Struct holds every number as
    a double; an option is a whole number), keys sorted (a Struct's come in no fixed order: the
    same log, the same bytes). ``json_format.Parse`` reads them back as the same doubles."""
    plain: dict[str, Any] = _sorted(codec.dict_of(options))
    return plain


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value
