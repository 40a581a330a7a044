"""The .proto comments are the reference a client in another language reads first (its
generated code carries them), so they are held to the code: every message, field, oneof,
enum, enum value, service and RPC has a leading comment, and the strings and limits the
comments spell out are the ones the engine and the server use, so a comment cannot go stale
unseen. The descriptors are read with their source info, from protoc itself."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from grpc_tools import protoc  # type: ignore[import-untyped]  # no stubs; protoc.main(argv) -> int

from cardarena.competition import MAX_EFFECT
from cardarena.competition.schedule import PLANNED
from cardarena.engine.games import GAMES, ROUND_KINDS
from cardarena.engine.triathlon import LAST, MIDDLE, MULTIPLE
from cardarena.server.api.limits import FAIR_FLOOR
from cardarena.server.api.play import OPEN_SECONDS, PLAY_QUEUE
from cardarena.server.api.requests import MAX_NAME, MAX_PAGE, MAX_REASON
from cardarena.server.api.streams import (
    MATCH_SPECTATORS,
    MATCH_SPECTATORS_PER_ADDRESS,
    MATCH_UNBATCHED_SPECTATORS,
    OPENING_CALLS,
    OPENING_CALLS_TOTAL,
    SEAT_STREAMS,
    SPECTATOR_FRAME,
    WATCH_STREAMS,
    WATCH_STREAMS_TOTAL,
)
from cardarena.server.api.tournament_requests import (
    MAX_CAPACITY,
    MAX_CONCURRENCY,
    MAX_DEALS,
    MAX_ENTRANTS,
    MAX_FORFEIT_AFTER,
    MAX_MATCH_LINES,
    MAX_PLANNED,
    MAX_TITLE,
)
from cardarena.server.api.tournaments import MAX_TOURNAMENT_PAGE
from cardarena.server.api.waiting import WAIT_SECONDS, WAIT_SPREAD
from cardarena.server.hosting.arena import MAX_MOVE_MS
from cardarena.server.hosting.subscribers import BATCH_EVENTS, SUBSCRIBER_QUEUE
from cardarena.server.house import BOTS, MAX_MC_BUDGET_MS, MC_BUDGET_MS
from cardarena.server.tournaments.spec import (
    DEFAULT_CONCURRENCY,
    DEFAULT_ENTRY_MS,
    DEFAULT_FORFEIT_AFTER,
    MAX_ENTRY_MS,
)
from cardarena.v1.chain import GENESIS_DOMAIN

ROOT = Path(__file__).resolve().parents[2] / "proto"
FILES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "cardarena" / "v1").glob("*.proto"))

# Field numbers of descriptor.proto, the steps of a SourceCodeInfo location's path.
MESSAGE, ENUM, SERVICE = 4, 5, 6  # in FileDescriptorProto
FIELD, NESTED, NESTED_ENUM, ONEOF = 2, 3, 4, 8  # in DescriptorProto
VALUE = 2  # in EnumDescriptorProto
METHOD = 2  # in ServiceDescriptorProto


@cache
def comments() -> dict[str, str]:
    """Every element's full name (``cardarena.v1.Snapshot.round_kind``) -> its leading comment
    (stripped; "" when it has none)."""
    with (
        resources.as_file(resources.files("grpc_tools") / "_proto") as includes,
        tempfile.TemporaryDirectory() as folder,
    ):
        out = Path(folder) / "descriptors.pb"
        code = protoc.main(
            [
                "protoc",
                f"-I{ROOT}",
                f"-I{includes}",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                *FILES,
            ]
        )
        assert code == 0, f"protoc failed ({code})"
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    found: dict[str, str] = {}
    for file in files:
        leading = {
            tuple(loc.path): loc.leading_comments.strip() for loc in file.source_code_info.location
        }
        for name, path in elements(file):
            found[name] = leading.get(path, "")
    return found


CHILDREN: dict[str, tuple[tuple[str, int, str], ...]] = {
    "file": (
        ("message_type", MESSAGE, "message"),
        ("enum_type", ENUM, "enum"),
        ("service", SERVICE, "service"),
    ),
    "message": (
        ("field", FIELD, "field"),
        ("oneof_decl", ONEOF, "oneof"),
        ("nested_type", NESTED, "message"),
        ("enum_type", NESTED_ENUM, "enum"),
    ),
    "enum": (("value", VALUE, "value"),),
    "service": (("method", METHOD, "method"),),
}
"""What each kind of descriptor holds: (its repeated field, that field's number in the
source-info path, the kind of element it holds). Fields, oneofs, values and methods hold
nothing that is documented."""


def elements(file: descriptor_pb2.FileDescriptorProto) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Every documented element of ``file``: its full name and its source-info path."""
    return _within(file.package, file, "file", ())


def _within(
    name: str, descriptor: Any, kind: str, path: tuple[int, ...]
) -> Iterator[tuple[str, tuple[int, ...]]]:
    """The elements inside ``descriptor`` (a ``kind``, called ``name`` at ``path``), each
    followed by the elements inside it."""
    for attribute, tag, inner in CHILDREN.get(kind, ()):
        for j, child in enumerate(getattr(descriptor, attribute)):
            if inner == "oneof" and child.name.startswith("_"):
                continue  # proto3 `optional` makes a synthetic oneof
            full, at = f"{name}.{child.name}", (*path, tag, j)
            yield full, at
            yield from _within(full, child, inner, at)


def comment(element: str) -> str:
    """An element's comment, its lines joined by single spaces."""
    return " ".join(comments()[f"cardarena.v1.{element}"].split())


def quoted(element: str) -> set[str]:
    """The double-quoted strings of an element's comment."""
    return set(re.findall(r'"([^"\n]*)"', comment(element)))


def test_the_descriptors_are_read_with_their_comments() -> None:
    # The reader itself: a walk that found nothing would pass every test below.
    assert len(comments()) > 400
    assert "cardarena.v1.MatchService.StreamEvents" in comments()
    assert comment("Event.seq").startswith("Starts at 1")


def test_every_message_field_enum_value_service_and_rpc_has_a_leading_comment() -> None:
    missing = sorted(name for name, text in comments().items() if not text)
    assert not missing, f"{len(missing)} elements without a leading comment: {missing}"


def test_the_round_kinds_listed_are_the_engines() -> None:
    for element in ("RoundStarted.kind", "Snapshot.round_kind"):
        assert quoted(element) - {""} == set(ROUND_KINDS), element


def test_the_feats_listed_are_the_engines() -> None:
    assert quoted("SeatFeats.feats") == {MULTIPLE, LAST, MIDDLE}


def test_the_games_listed_are_the_registrys() -> None:
    assert quoted("GameDescription.name") == set(GAMES)


def test_the_house_bots_listed_are_the_servers() -> None:
    for element in ("HouseBots.bots", "HouseSeat.bot"):
        assert quoted(element) == set(BOTS), element


def test_the_sprt_verdicts_listed_are_the_stop_rules() -> None:
    assert quoted("SprtState.verdict") == {"H0", "H1", ""}


def test_the_fixed_strings_quoted_are_the_servers() -> None:
    assert PLANNED in quoted("TournamentInfo.end_reason")
    genesis = GENESIS_DOMAIN.decode()
    assert f'SHA-256("{genesis}" || match_id)' in comment("LogEntry")
    assert f"the {len(GENESIS_DOMAIN)} ASCII bytes of the label" in comment("LogEntry")


def test_the_limits_in_the_comments_are_the_servers() -> None:
    def spelled(number: int) -> str:
        return f"{number:,}" if number >= 10_000 else str(number)

    pins: dict[str, str | tuple[str, ...]] = {
        "ListMatchesRequest.page_size": f"1..{spelled(MAX_PAGE)}",
        "ListTournamentsRequest.page_size": f"1..{MAX_TOURNAMENT_PAGE}",
        "JoinMatchRequest.name": f"at most {MAX_NAME} characters",
        "CancelMatchRequest.reason": f"at most {MAX_REASON} characters",
        "CancelTournamentRequest.reason": f"at most {MAX_REASON} characters",
        "TimeControl.move_ms": f"0..{spelled(MAX_MOVE_MS)}",
        "CreateTournamentRequest.time_control": f"each 0..{spelled(MAX_MOVE_MS)}",
        "TimeControl.bank_ms": f"0..{spelled(MAX_MOVE_MS)} milliseconds",
        "TimeControl.round_ms": f"0..{spelled(MAX_MOVE_MS)} milliseconds",
        "TimeControl.increment_ms": f"0..{spelled(MAX_MOVE_MS)}",
        "CreateTournamentRequest.name": f"at most {MAX_TITLE} characters",
        "CreateTournamentRequest.entrants": f"2 to {MAX_ENTRANTS}",
        "CreateTournamentRequest.deals": f"1..{spelled(MAX_DEALS)}",
        "CreateTournamentRequest.concurrency": (
            f"1..{MAX_CONCURRENCY}; 0 means {DEFAULT_CONCURRENCY}"
        ),
        "CreateTournamentRequest.entry_ms": (
            f"1..{spelled(MAX_ENTRY_MS)}; 0 means {spelled(DEFAULT_ENTRY_MS)}"
        ),
        "EntrantSpec.name": f"1 to {MAX_NAME}",
        "FaultPolicy.forfeit_after": f"1..{spelled(MAX_FORFEIT_AFTER)}",
        "EnterRequest.capacity": f"1..{MAX_CAPACITY}",
        "GetTournamentRequest.matches_limit": f"1..{spelled(MAX_MATCH_LINES)}",
        "FaultPolicy.policy": f"forfeit after {DEFAULT_FORFEIT_AFTER}",
        "StreamEventsRequest.after_seq": f"{spelled(SUBSCRIBER_QUEUE)} messages",
        "MatchService.Play": (
            f"{spelled(PLAY_QUEUE)} messages",
            f"within {OPEN_SECONDS:g} s",
            f"holds {OPENING_CALLS} Play calls",
            f"the server's {OPENING_CALLS_TOTAL})",
            f"holds at most {SEAT_STREAMS} such calls",
        ),
        "SprtRule.d0": f"-{int(MAX_EFFECT):,} to {int(MAX_EFFECT):,}",
        "MatchService.StreamEvents": f"the seat has {SEAT_STREAMS} streams open",
        "MatchService.WatchMatch": (
            f"{WATCH_STREAMS} unless the operator set another",
            f"the server's {WATCH_STREAMS_TOTAL} while",
            f"{FAIR_FLOOR} per address",
            f"already has {MATCH_SPECTATORS} spectators",
            f"({MATCH_SPECTATORS_PER_ADDRESS} of",
            f"{MATCH_UNBATCHED_SPECTATORS} of them without WatchMatchRequest.batched",
            f"waits for one, {WAIT_SECONDS * WAIT_SPREAD[0]:g} to {WAIT_SECONDS:g} s",
        ),
        "WatchMatchRequest.batched": (
            f"one message every {SPECTATOR_FRAME * 1000:g} ms",
            f"up to {BATCH_EVENTS} events a message",
            f"room for {MATCH_SPECTATORS} spectators, of which {MATCH_UNBATCHED_SPECTATORS}",
        ),
        "CreateTournamentRequest": f"At most {spelled(MAX_PLANNED)} matches",
        "HouseSeat.budget_ms": f"1..{MAX_MC_BUDGET_MS} milliseconds; 0 means {MC_BUDGET_MS}",
    }
    wrong = {
        element: text
        for element, texts in pins.items()
        for text in ((texts,) if isinstance(texts, str) else texts)
        if text not in comment(element)
    }
    assert not wrong, f"comments that do not say the server's limit: {wrong}"
