"""Checking a CreateTournamentRequest: every field, each refusal naming the one it is about."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cardarena.competition import MAX_EFFECT, Design
from cardarena.engine import get_game
from cardarena.engine.match import MatchSetup, setup
from cardarena.v1 import codec
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.clocks import TimeControl
from cardarena.v1.designs import design_of

from ..errors import BadRequest
from ..hosting.arena import MAX_MOVE_MS
from ..hosting.credentials import secret_hash
from ..tournaments.entrants import key_hash
from ..tournaments.spec import (
    DEFAULT_CONCURRENCY,
    DEFAULT_ENTRY_MS,
    DEFAULT_FORFEIT_AFTER,
    MAX_ENTRY_MS,
    Sprt,
    TournamentSpec,
)
from .requests import MAX_NAME, check_request_id, check_secret, check_text, parsed

MAX_ENTRANTS = 64
MAX_DEALS = 10_000
MAX_CONCURRENCY = 256
MAX_CAPACITY = MAX_CONCURRENCY
"""The most matches an entrant may say it plays at once (EnterRequest.capacity)."""
MAX_PLANNED = 100_000
MAX_FORFEIT_AFTER = 1000
MAX_TITLE = 100
MAX_MATCH_LINES = 1000
"""Match lines one GetTournament answers: a page costs the same whatever the plan's size
(about 8 ms of the event loop for 1,000 lines)."""


@dataclass(frozen=True)
class Shared:
    """What a tournament and a ladder are both asked for, checked: entrants, game, seats,
    options, clock, concurrency, fault policy."""

    names: list[str]
    hashes: list[str]
    drawn: list[int]
    prepared: MatchSetup
    lowest_wins: bool
    control: TimeControl
    concurrency: int
    forfeit_after: int
    creator: str | None


def shared_settings(request: Any, what: str) -> Shared:
    """The checks a CreateTournamentRequest and a CreateLadderRequest share (``what``: the
    noun refusals use), each refusal naming its field."""
    check_text("name", request.name, MAX_TITLE)
    check_request_id(request.request_id)
    check_secret("creator_secret", request.creator_secret)
    names, hashes, drawn = _entrants(request)
    game = get_game(request.game)
    players = request.players
    if players == 0:
        players = len(names) if len(names) in game.players else game.default_players
    options = (
        parsed("options", lambda: codec.dict_of(request.options))
        if request.HasField("options")
        else {}
    )
    prepared = setup(game.name, players=players, options=options)
    if len(names) < prepared.players:
        raise BadRequest(
            f"entrants: {len(names)} for {prepared.players} seats; a {what} needs an"
            " entrant per seat (one entrant in two seats would see two hands)"
        )
    try:
        control = TimeControl.of_message(request.time_control).check()
    except ValueError as error:
        raise BadRequest(str(error)) from None
    if not control.timed:
        raise BadRequest(
            f"time_control.move_ms must be 1..{MAX_MOVE_MS} (or set bank_ms or round_ms): a"
            f" {what} needs a clock, so that an entrant who is away cannot stall it"
        )
    concurrency = request.concurrency or DEFAULT_CONCURRENCY
    if concurrency > MAX_CONCURRENCY:
        raise BadRequest(f"concurrency is at most {MAX_CONCURRENCY}, got {concurrency}")
    return Shared(
        names=names,
        hashes=hashes,
        drawn=drawn,
        prepared=prepared,
        lowest_wins=game.lowest_wins,
        control=control,
        concurrency=concurrency,
        forfeit_after=_forfeit_after(request),
        creator=secret_hash(request.creator_secret).hex() if request.creator_secret else None,
    )


def tournament_spec(request: tpb.CreateTournamentRequest) -> tuple[TournamentSpec, list[int]]:
    """The checked settings, and the entrants whose keys the server is to draw (their
    ``key_hashes`` are empty until it does)."""
    if request.seed and len(request.seed) != 32:
        raise BadRequest(f"seed must be exactly 32 bytes, got {len(request.seed)}")
    shared = shared_settings(request, "tournament")
    names, prepared, control = shared.names, shared.prepared, shared.control
    if not 1 <= request.deals <= MAX_DEALS:
        raise BadRequest(f"deals must be 1..{MAX_DEALS}, got {request.deals}")
    entry_ms = request.entry_ms or DEFAULT_ENTRY_MS
    if entry_ms > MAX_ENTRY_MS:
        raise BadRequest(f"entry_ms is at most {MAX_ENTRY_MS}, got {entry_ms}")
    design = _design(request.pairings, len(names), prepared.players)
    groups = design.groups_per_deal(len(names), prepared.players)
    size = design.group_size(len(names), prepared.players)
    planned = request.deals * groups * size
    if planned > MAX_PLANNED:
        raise BadRequest(
            f"{request.deals} deals of {groups} {design.kind} groups of {size} matches are"
            f" {planned} matches: at most {MAX_PLANNED}"
        )
    spec = TournamentSpec(
        name=request.name,
        game=prepared.game,
        players=prepared.players,
        options=dict(prepared.options),
        move_ms=control.move_ms,
        bank_ms=control.bank_ms,
        increment_ms=control.increment_ms,
        round_ms=control.round_ms,
        entrants=tuple(names),
        key_hashes=tuple(shared.hashes),
        deals=request.deals,
        concurrency=shared.concurrency,
        forfeit_after=shared.forfeit_after,
        lowest_wins=shared.lowest_wins,
        sprt=_sprt(request, names) if request.HasField("stop") else None,
        creator=shared.creator,
        entry_ms=entry_ms,
        pairing=design.kind,
        candidates=design.candidates,
    )
    return spec, shared.drawn


def _design(pairings: tpb.Pairings, entrants: int, players: int) -> Design:
    try:
        design = design_of(pairings)
    except ValueError as error:
        raise BadRequest(str(error)) from None
    try:
        design.check(entrants, players)
    except ValueError as error:
        raise BadRequest(f"pairings: {error}") from None
    return design


def _entrants(request: Any) -> tuple[list[str], list[str], list[int]]:
    if not 2 <= len(request.entrants) <= MAX_ENTRANTS:
        raise BadRequest(f"entrants: 2 to {MAX_ENTRANTS}, got {len(request.entrants)}")
    names: list[str] = []
    hashes: list[str] = []
    drawn: list[int] = []
    for i, entrant in enumerate(request.entrants):
        where = f"entrants[{i}]"
        if not entrant.name.strip():
            raise BadRequest(f"{where}.name is empty")
        check_text(f"{where}.name", entrant.name, MAX_NAME)
        if entrant.name != entrant.name.strip():  # "a", "a " and " a" would look alike
            raise BadRequest(f"{where}.name {entrant.name!r} begins or ends with a space")
        if entrant.name in names:
            raise BadRequest(f"{where}.name {entrant.name!r} is taken by another entrant")
        check_secret(f"{where}.key", entrant.key)
        digest = key_hash(entrant.key).hex() if entrant.key else ""
        if digest and digest in hashes:
            raise BadRequest(f"{where}.key is another entrant's key")
        names.append(entrant.name)
        hashes.append(digest)
        if not entrant.key:
            drawn.append(i)
    return names, hashes, drawn


def _forfeit_after(request: Any) -> int:
    which = request.fault_policy.WhichOneof("policy")
    if which is None:
        return DEFAULT_FORFEIT_AFTER
    if which == "fallback":
        if not request.fault_policy.fallback:
            raise BadRequest("fault_policy.fallback: set it to true, or choose forfeit_after")
        return 0
    after = int(request.fault_policy.forfeit_after)
    if not 1 <= after <= MAX_FORFEIT_AFTER:
        raise BadRequest(f"fault_policy.forfeit_after must be 1..{MAX_FORFEIT_AFTER}, got {after}")
    return after


def _sprt(request: tpb.CreateTournamentRequest, names: list[str]) -> Sprt:
    rule = request.stop
    for field, name in (("a", rule.a), ("b", rule.b)):
        if name not in names:
            raise BadRequest(f"stop.{field}: {name!r} is not an entrant")
    if rule.a == rule.b:
        raise BadRequest("stop.a and stop.b name the same entrant")
    alpha, beta = rule.alpha or 0.05, rule.beta or 0.05
    for field, value in (("alpha", alpha), ("beta", beta)):
        if not 0 < value < 0.5:
            raise BadRequest(f"stop.{field} must be in (0, 0.5), got {value}")
    for field, value in (("d0", rule.d0), ("d1", rule.d1)):
        if not abs(value) <= MAX_EFFECT:  # NaN too
            raise BadRequest(
                f"stop.{field} must be a number from -{MAX_EFFECT:g} to {MAX_EFFECT:g}, got {value}"
            )
    if not rule.d1 > rule.d0:
        raise BadRequest(f"stop.d1 ({rule.d1}) must be greater than stop.d0 ({rule.d0})")
    return Sprt(rule.a, rule.b, alpha=alpha, beta=beta, d0=rule.d0, d1=rule.d1)


def match_page(request: tpb.GetTournamentRequest, planned: int) -> range | None:
    """The plan indices whose lines a GetTournament asks for; ``None``: none."""
    if not request.include_matches:
        return None
    limit = request.matches_limit or MAX_MATCH_LINES
    if limit > MAX_MATCH_LINES:
        raise BadRequest(f"matches_limit is at most {MAX_MATCH_LINES}, got {limit}")
    first = request.matches_from
    if first > planned:
        raise BadRequest(f"matches_from is past the plan: {first} of {planned} matches")
    return range(first, min(first + limit, planned))
