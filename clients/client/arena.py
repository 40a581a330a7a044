"""A typed asyncio client for a cardarena server, and the loop that plays a seat.

``play`` survives anything a network or a server restart can do to it: it resumes the event
stream from the last ``seq`` it saw, and it submits each decision with a random request id
that its retries reuse, so a retry is applied once and a duplicate is harmless.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import grpc
from google.protobuf import struct_pb2

from cardarena.v1 import codec, service_pb2_grpc
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..bots.base import Bot
from ..bots.state import SeatState
from .channel import (
    CHANNEL_OPTIONS,
    CONNECT_WITHIN_S,
    RETRYABLE,
    channel_target,
    retry_after,
    wait_connected,
)
from .entropy import Contribution, contributed
from .ladders import LadderCalls
from .seatplay import Decide, Prompt, Quiet, choose, follow_play, reads_on, take
from .tournaments import TournamentCalls

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub


@dataclass(frozen=True)
class Ticket:
    """A taken seat: the match, the seat and its secret token (never log it)."""

    match_id: str
    seat: int
    token: str

    def __repr__(self) -> str:
        return f"Ticket(match_id={self.match_id!r}, seat={self.seat}, token=…)"

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)


def new_secret() -> str:
    """A fresh join secret or creator secret (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


class ArenaClient:
    """One channel to a server, or to several replicas (``"h1:p1,h2:p2"``), spreading calls
    round robin. Use as ``async with ArenaClient(address) as client``."""

    def __init__(
        self,
        address: str,
        *,
        timeout: float = 10.0,
        retry_for: float = 30.0,
        quiet_reopen: float = 60.0,
        operator_token: str | None = None,
    ) -> None:
        self.address = address
        self._operator = (
            () if not operator_token else (("authorization", f"Bearer {operator_token}"),)
        )
        """Sent with creating and cancelling: the server's operator token, if it has one."""
        self.timeout = timeout
        self.retry_for = retry_for
        self.quiet_reopen = quiet_reopen
        """A seat's stream silent this long is reopened from the last seq: a fresh snapshot
        costs little, and it recovers from anything that left the stream waiting for
        nothing (a quiet stream is no failure: opponents may think for long)."""
        self._channel: grpc.aio.Channel | None = None
        self._stub: MatchServiceAsyncStub | None = None
        self._tournaments: TournamentCalls | None = None
        self._ladders: LadderCalls | None = None

    async def __aenter__(self) -> ArenaClient:
        self._channel = grpc.aio.insecure_channel(
            channel_target(self.address), options=CHANNEL_OPTIONS
        )
        self._stub = service_pb2_grpc.MatchServiceStub(self._channel)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._channel is not None:
            await self._channel.close()

    async def connected(self, within: float = CONNECT_WITHIN_S) -> None:
        """Wait until a server answers, for at most ``within`` seconds; else
        :class:`~.channel.Unreachable` naming the address. For a command's first call: the
        calls themselves retry an unreachable server for ``retry_for`` seconds each, which
        is right for a server that restarts, and far too long to say that none is there."""
        if self._channel is None:
            raise RuntimeError("use the client inside `async with`")
        await wait_connected(self._channel, self.address, within)

    @property
    def stub(self) -> MatchServiceAsyncStub:
        if self._stub is None:
            raise RuntimeError("use the client inside `async with`")
        return self._stub

    @property
    def tournaments(self) -> TournamentCalls:
        """The tournament calls, over the same channel."""
        if self._channel is None:
            raise RuntimeError("use the client inside `async with`")
        if self._tournaments is None:
            self._tournaments = TournamentCalls(self, self._channel)
        return self._tournaments

    @property
    def ladders(self) -> LadderCalls:
        """The ladder calls, over the same channel."""
        if self._channel is None:
            raise RuntimeError("use the client inside `async with`")
        if self._ladders is None:
            self._ladders = LadderCalls(self, self._channel)
        return self._ladders

    async def _retrying(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """Retry a call that is safe to repeat while the server is briefly unreachable, or
        when it said to retry after a delay (a rate, the gate of anonymous reads)."""
        deadline = asyncio.get_running_loop().time() + self.retry_for
        delay = 0.05
        while True:
            try:
                return await call()
            except grpc.aio.AioRpcError as error:
                told = retry_after(error)
                if (told is None and error.code() not in RETRYABLE) or (
                    asyncio.get_running_loop().time() > deadline
                ):
                    raise
            if told is not None:
                await asyncio.sleep(told)
                continue
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def list_games(self) -> list[spb.GameDescription]:
        response = await self._retrying(
            lambda: self.stub.ListGames(spb.ListGamesRequest(), timeout=self.timeout)
        )
        return list(response.games)

    async def create_match(
        self,
        game: str,
        *,
        players: int = 0,
        options: Mapping[str, Any] | None = None,
        move_ms: int = 0,
        seed: bytes = b"",
        reserved: Mapping[int, str] | None = None,
        creator_secret: str = "",
    ) -> spb.MatchInfo:
        """Create a match. ``reserved`` maps seats to the join secrets that alone may take
        them (see :func:`new_secret`); whoever holds ``creator_secret`` may cancel it."""
        struct = struct_pb2.Struct()
        struct.update(dict(options or {}))
        request = spb.CreateMatchRequest(
            game=game,
            players=players,
            options=struct,
            time_control=spb.TimeControl(move_ms=move_ms),
            seed=seed,
            request_id=secrets.token_hex(16),  # a retry finds the match, not a second one
            reserved_seats=[
                spb.SeatReservation(seat=s, join_secret=x)
                for s, x in sorted((reserved or {}).items())
            ],
            creator_secret=creator_secret,
        )
        response: spb.CreateMatchResponse = await self._retrying(
            lambda: self.stub.CreateMatch(request, metadata=self._operator, timeout=self.timeout)
        )
        return response.match

    async def cancel_match(
        self, match_id: str, *, reason: str = "", secret: str | None = None
    ) -> spb.MatchInfo:
        """End a match that has not ended, as the operator or with its creator ``secret``."""
        metadata = self._operator if secret is None else (("authorization", f"Bearer {secret}"),)
        request = spb.CancelMatchRequest(match_id=match_id, reason=reason)
        response: spb.CancelMatchResponse = await self._retrying(
            lambda: self.stub.CancelMatch(request, metadata=metadata, timeout=self.timeout)
        )
        return response.match

    async def join(
        self,
        match_id: str,
        *,
        seat: int | None = None,
        name: str = "",
        join_secret: str = "",
        contribution: Contribution = "fresh",
    ) -> Ticket:
        """Take a seat (a reserved one with its ``join_secret``). The token is chosen here, so
        a join whose answer was lost is retried safely: the server answers a repeat with the
        seat the token already holds.

        The seat contributes 32 fresh random bytes to the deal seed (``"fresh"``), or 32 bytes
        of your own, or none (``None``; a tournament's matches take none): with one honest seat at
        the table, not even the server chose the cards (docs/rules.md §4.8)."""
        request = spb.JoinMatchRequest(
            match_id=match_id,
            name=name,
            token=secrets.token_urlsafe(32),
            join_secret=join_secret,
            contribution=contributed(contribution),
        )
        if seat is not None:
            request.seat = seat
        response = await self._retrying(lambda: self.stub.JoinMatch(request, timeout=self.timeout))
        return Ticket(match_id, response.seat, response.token)

    async def get_match(self, match_id: str) -> spb.MatchInfo:
        request = spb.GetMatchRequest(match_id=match_id)
        response: spb.GetMatchResponse = await self._retrying(
            lambda: self.stub.GetMatch(request, timeout=self.timeout)
        )
        return response.match

    async def match_log(self, match_id: str) -> spb.GetMatchLogResponse:
        request = spb.GetMatchLogRequest(match_id=match_id)
        response: spb.GetMatchLogResponse = await self._retrying(
            lambda: self.stub.GetMatchLog(request, timeout=self.timeout)
        )
        return response

    async def submit(
        self, ticket: Ticket, action: int, expected_seq: int
    ) -> spb.SubmitActionResponse:
        """Submit idempotently: every retry of this call carries the same request id, drawn
        at random so that nobody can guess (and spend) it first."""
        request = spb.SubmitActionRequest(
            match_id=ticket.match_id,
            seat=ticket.seat,
            action=codec.action_to_pb(action),
            expected_seq=expected_seq,
            request_id=secrets.token_hex(16),
        )
        response: spb.SubmitActionResponse = await self._retrying(
            lambda: self.stub.SubmitAction(request, metadata=ticket.metadata, timeout=self.timeout)
        )
        return response

    async def watch(
        self, match_id: str, *, after_seq: int = 0
    ) -> AsyncIterator[pb.Snapshot | pb.Event | pb.Turn]:
        """Watch ``match_id`` as a spectator (no hidden card) until it ends: what WatchMatch
        sends, a ``Snapshot`` first, then ``Event`` entries after ``after_seq`` and ``Turn``
        messages (whose turn it is, and the move deadline). A stream that breaks is reopened
        from the last seq seen (a fresh ``Snapshot`` first, then exactly the events missed),
        with backoff, for up to ``retry_for`` seconds without a message. The stream is asked
        for in batches (``WatchMatchRequest.batched``: at most ten messages a second, which is
        what lets many people watch one match), and takes each message of a batch in turn."""
        loop = asyncio.get_running_loop()
        seq, deadline, delay = after_seq, loop.time() + self.retry_for, 0.05
        while True:
            request = spb.WatchMatchRequest(match_id=match_id, after_seq=seq, batched=True)
            try:
                async for batch in self.stub.WatchMatch(request):
                    deadline, delay = loop.time() + self.retry_for, 0.05
                    for message in (batch, *batch.more):
                        kind = message.WhichOneof("kind")
                        if kind == "event":
                            seq = message.event.seq
                            yield message.event
                        elif kind == "snapshot":
                            yield message.snapshot
                        # else none (a turn alone) or a kind this client does not know
                        if message.HasField("turn"):  # whose turn it is after the event
                            yield message.turn
                return
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or loop.time() > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def play(
        self,
        ticket: Ticket,
        bot: Bot | None = None,
        *,
        decide: Decide | None = None,
        on_event: Callable[[SeatState, pb.Event], None] | None = None,
        judge: bool = False,
        via: Literal["events", "play"] = "play",
    ) -> SeatState:
        """Play ``ticket``'s seat until the match ends; return the final state.

        ``via="play"`` (the default) reads the seat's events and acts on one ``Play`` call;
        ``via="events"`` follows the seat's ``StreamEvents`` and acts with unary
        ``SubmitAction`` calls, which costs the client and the server more per action.

        The state keeps whose turn it is and the move deadline (``to_act``,
        ``deadline_unix_ms``) as the stream's ``Turn`` messages say, for every seat.

        On each ``YourTurn`` the seat's decision comes from ``decide(state)`` (an awaitable:
        the runner uses it to guard against bots that crash or hang), or else from
        ``bot.choose(state)`` run in a worker thread. A stream that breaks (server restart, drain,
        network) is reopened from the last ``seq`` seen, with backoff, for up to ``retry_for``
        seconds without progress.

        A decision outside the legal actions is refused here, unless ``judge`` leaves it to
        the server (a tournament's, which logs it as the seat's fault); a ``decide`` that
        raises :class:`Abstain` lets the server's clock play the turn.
        """
        if decide is None:
            if bot is None:
                raise TypeError("play() needs a bot or a decide function")
            decide = decide_with(bot)
        state = SeatState(ticket.match_id, ticket.seat)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.retry_for
        if via not in ("events", "play"):
            raise ValueError(f"via must be 'events' or 'play', got {via!r}")
        delay = 0.05
        sent: dict[int, spb.PlayAction] = {}
        while True:
            seen = state.seq
            try:
                if via == "play":
                    await follow_play(
                        self.stub, ticket, decide, state, on_event, judge, sent, self.quiet_reopen
                    )
                else:
                    await self._follow(ticket, decide, state, on_event, judge)
            except Quiet:
                deadline, delay = loop.time() + self.retry_for, 0.05
                continue
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE:
                    raise
            if state.over:
                return state
            if state.seq > seen:
                deadline, delay = loop.time() + self.retry_for, 0.05
            elif loop.time() > deadline:
                raise TimeoutError(f"no progress in match {ticket.match_id} for {self.retry_for} s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _follow(
        self,
        ticket: Ticket,
        decide: Decide,
        state: SeatState,
        on_event: Callable[[SeatState, pb.Event], None] | None,
        judge: bool = False,
    ) -> None:
        """Follow the seat's stream from ``state.seq``; answer each turn once caught up to it."""
        request = spb.StreamEventsRequest(
            match_id=ticket.match_id, seat=ticket.seat, after_seq=state.seq, batched=True
        )
        stream = self.stub.StreamEvents(request, metadata=ticket.metadata)
        turn: Prompt | None = None
        messages = aiter(stream)
        while True:
            try:
                async with asyncio.timeout(self.quiet_reopen):
                    message = await anext(messages)
            except StopAsyncIteration:
                return
            except TimeoutError:
                stream.cancel()
                raise Quiet from None
            turn = take(message, state, on_event) or turn
            if turn is not None and turn[0] == state.seq:
                seq, legal = turn
                turn = None
                await self._decide(ticket, decide, state, seq, legal, judge)

    async def _decide(
        self,
        ticket: Ticket,
        decide: Decide,
        state: SeatState,
        seq: int,
        legal: list[pb.Action],
        judge: bool = False,
    ) -> None:
        if seq != state.seq:
            return  # a prompt for a position this client has not caught up with, or has left
        action = await choose(decide, state, legal, judge)
        if action is None:
            return
        try:
            await self.submit(ticket, action, seq)
        except grpc.aio.AioRpcError as error:
            if not reads_on(error.code(), judge):
                raise


def decide_with(bot: Bot) -> Decide:
    """Ask ``bot`` in a worker thread, so a slow bot never stalls the other matches' streams."""

    async def decide(state: SeatState) -> int:
        return await asyncio.to_thread(bot.choose, state)

    return decide
