"""The tournament calls of the client library: create, follow, cancel, and enter as a bot.

A tournament hosted by the server (``docs/tournaments.md``): the server schedules its matches
and seats the entrants; an entrant connects with its key (:meth:`TournamentCalls.enter`) and
is told each match it sits in, with the seat's token, which :meth:`ArenaClient.play` plays.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import struct_pb2

from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1 import tournament_pb2_grpc

from .entropy import Contribution, contributed

if TYPE_CHECKING:
    from cardarena.v1.tournament_pb2_grpc import TournamentServiceAsyncStub

    from .arena import ArenaClient


@dataclass(frozen=True)
class Entrant:
    """One entrant of a tournament to create: its name and (optionally) its key."""

    name: str
    key: str = ""

    def __repr__(self) -> str:
        return f"Entrant(name={self.name!r}, key=…)"


@dataclass(frozen=True)
class StopRule:
    """Stop when an SPRT on the paired duplicate-group differences of ``a`` and ``b``
    accepts H0 (mean advantage ``d0``) or H1 (``d1``)."""

    a: str
    b: str
    d1: float
    """H1's mean advantage of ``a`` per duplicate group: the smallest worth detecting (above
    ``d0``), in score points."""
    d0: float = 0.0
    alpha: float = 0.05
    """The chance of accepting H1 when H0 is true (and ``beta`` the other way round)."""
    beta: float = 0.05


def creation(
    game: str,
    entrants: Sequence[Entrant],
    *,
    deals: int,
    move_ms: int,
    players: int = 0,
    options: Mapping[str, Any] | None = None,
    concurrency: int = 0,
    forfeit_after: int | None = 3,
    stop: StopRule | None = None,
    seed: bytes = b"",
    name: str = "",
    request_id: str = "",
    creator_secret: str = "",
    entry_ms: int = 0,
) -> tpb.CreateTournamentRequest:
    """The request :meth:`TournamentCalls.create` sends, for a caller that adds to it before
    sending it with :meth:`TournamentCalls.create_from`."""
    struct = struct_pb2.Struct()
    struct.update(dict(options or {}))
    policy = (
        tpb.FaultPolicy(fallback=True)
        if forfeit_after is None
        else tpb.FaultPolicy(forfeit_after=forfeit_after)
    )
    request = tpb.CreateTournamentRequest(
        name=name,
        game=game,
        players=players,
        options=struct,
        time_control=spb.TimeControl(move_ms=move_ms),
        entrants=[tpb.EntrantSpec(name=e.name, key=e.key) for e in entrants],
        deals=deals,
        concurrency=concurrency,
        fault_policy=policy,
        seed=seed,
        request_id=request_id,
        creator_secret=creator_secret,
        entry_ms=entry_ms,
    )
    if stop is not None:
        request.stop.CopyFrom(
            tpb.SprtRule(
                a=stop.a, b=stop.b, alpha=stop.alpha, beta=stop.beta, d0=stop.d0, d1=stop.d1
            )
        )
    return request


def _bearer(secret: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {secret}"),)


class TournamentCalls:
    """``client.tournaments``: the TournamentService over the client's channel."""

    def __init__(self, client: ArenaClient, channel: grpc.aio.Channel) -> None:
        self._client = client
        self.stub: TournamentServiceAsyncStub = tournament_pb2_grpc.TournamentServiceStub(channel)

    async def create(
        self,
        game: str,
        entrants: Sequence[Entrant],
        *,
        deals: int,
        move_ms: int,
        players: int = 0,
        options: Mapping[str, Any] | None = None,
        concurrency: int = 0,
        forfeit_after: int | None = 3,
        stop: StopRule | None = None,
        seed: bytes = b"",
        name: str = "",
        request_id: str = "",
        creator_secret: str = "",
        entry_ms: int = 0,
    ) -> tpb.CreateTournamentResponse:
        """Create a tournament; ``forfeit_after=None`` is the fallback policy (faults are
        counted, never forfeit). Keys the server drew come back in ``entrant_keys``. The first
        match waits up to ``entry_ms`` (0: the server's default) for every entrant to enter.
        With keys for the server to draw, a ``request_id`` makes a retry safe only with a
        ``creator_secret`` too (or as the operator): the server gives drawn keys again only
        to a retry that proves it is the creator (ALREADY_EXISTS otherwise)."""
        request = creation(
            game,
            entrants,
            deals=deals,
            move_ms=move_ms,
            players=players,
            options=options,
            concurrency=concurrency,
            forfeit_after=forfeit_after,
            stop=stop,
            seed=seed,
            name=name,
            request_id=request_id,
            creator_secret=creator_secret,
            entry_ms=entry_ms,
        )
        return await self.create_from(request)

    async def create_from(
        self, request: tpb.CreateTournamentRequest
    ) -> tpb.CreateTournamentResponse:
        """Create the tournament ``request`` describes, whole: for callers that set fields
        :meth:`create` has no argument for (the command line maps each of its flags to one
        field). As the operator when the client has the token."""
        client = self._client
        response: tpb.CreateTournamentResponse = await client._retrying(
            lambda: self.stub.CreateTournament(
                request, metadata=client._operator, timeout=client.timeout
            )
        )
        return response

    async def get(self, tournament_id: str, *, matches: bool = False) -> tpb.TournamentInfo:
        """The tournament now; with ``matches``, every line of its plan, read a page at a
        time and returned in one message (a running tournament's pages are read as it moves
        on: each line is as of its page)."""
        info = await self._page(tournament_id, matches, 0)
        while matches and len(info.matches) < info.planned:
            page = await self._page(tournament_id, True, len(info.matches))
            if not page.matches:  # the server lists no more: never loop on it
                break
            info.matches.extend(page.matches)
        return info

    async def _page(self, tournament_id: str, matches: bool, first: int) -> tpb.TournamentInfo:
        request = tpb.GetTournamentRequest(
            tournament_id=tournament_id, include_matches=matches, matches_from=first
        )
        response: tpb.GetTournamentResponse = await self._client._retrying(
            lambda: self.stub.GetTournament(request, timeout=self._client.timeout)
        )
        return response.tournament

    async def cancel(
        self, tournament_id: str, *, reason: str = "", secret: str | None = None
    ) -> tpb.TournamentInfo:
        """Cancel as the operator, or with the tournament's creator ``secret``."""
        client = self._client
        metadata = client._operator if secret is None else _bearer(secret)
        request = tpb.CancelTournamentRequest(tournament_id=tournament_id, reason=reason)
        response: tpb.CancelTournamentResponse = await client._retrying(
            lambda: self.stub.CancelTournament(request, metadata=metadata, timeout=client.timeout)
        )
        return response.tournament

    async def watch(self, tournament_id: str) -> AsyncIterator[tpb.TournamentInfo]:
        """The tournament now and after every change, until it ends (one stream: a broken
        one ends the iteration with its error)."""
        request = tpb.WatchTournamentRequest(tournament_id=tournament_id)
        async for response in self.stub.WatchTournament(request):
            yield response.tournament

    def enter(
        self,
        tournament_id: str,
        key: str,
        *,
        contribution: Contribution = "fresh",
        capacity: int = 0,
    ) -> grpc.aio.UnaryStreamCall[tpb.EnterRequest, tpb.EnterResponse]:
        """An entrant's stream: ``entered`` first, then a ``match`` per seat it is given, and
        ``ended`` last. It contributes 32 fresh random bytes to the tournament seed (or 32
        bytes of your own, or none with ``None``), which count if it is the entrant's first
        Enter before the first match: with one honest entrant, nobody chose the cards.
        ``capacity``: the most matches it is seated in at once (0: the tournament's
        concurrency)."""
        request = tpb.EnterRequest(
            tournament_id=tournament_id,
            contribution=contributed(contribution),
            capacity=capacity,
        )
        return self.stub.Enter(request, metadata=_bearer(key))
