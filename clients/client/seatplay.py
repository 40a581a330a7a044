"""How a seat's stream is read and answered: what each message tells the seat, and the loop
that plays a seat on one ``Play`` call (``ArenaClient.play(via="play")``; the loop on
``StreamEvents`` and unary ``SubmitAction`` is ``ArenaClient._follow``)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

import grpc

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..bots.entries import fold_entry
from ..bots.state import SeatState
from .channel import RETRYABLE

if TYPE_CHECKING:
    from grpc.aio import StreamStreamCall

    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

    from .arena import Ticket

Decide = Callable[[SeatState], Awaitable[int]]
"""How a seat's next action is chosen, given what the seat knows."""

Prompt = tuple[int, list[pb.Action]]
"""A turn to answer: its seq and the legal actions then."""

OnEvent = Callable[[SeatState, pb.Event], None] | None


class Abstain(Exception):
    """Raised by a ``decide`` function: the seat does not act this turn (its bot failed);
    the server's clock plays for it, and counts the time-out against it."""


class Quiet(Exception):
    """A seat's stream said nothing for ``quiet_reopen`` seconds: reopen it."""


def observe(state: SeatState, event: pb.Event, on_event: OnEvent) -> None:
    """Fold a log entry the seat has not seen yet into ``state``."""
    if event.seq <= state.seq:
        return
    fold_entry(state, event)  # a cancelled match is over: GetMatch says so, no winners
    if on_event is not None:
        on_event(state, event)


def take(
    message: spb.StreamEventsResponse | spb.PlayResponse, state: SeatState, on_event: OnEvent
) -> Prompt | None:
    """Fold one stream message into ``state`` (every event it carries, in order: a batched
    stream's message holds a whole write's); the prompt it carries, if any."""
    prompt: Prompt | None = None
    kind = message.WhichOneof("kind")
    if kind == "event":
        observe(state, message.event, on_event)
        for event in message.more_events:  # the rest of its write, on a batched stream
            observe(state, event, on_event)
    elif kind == "snapshot":
        snap = message.snapshot
        state.note_turn(snap.to_act if snap.HasField("to_act") else None, snap.deadline_unix_ms)
        if snap.legal_actions:
            prompt = (snap.seq, list(snap.legal_actions))
    elif kind == "your_turn":
        prompt = (message.your_turn.seq, list(message.your_turn.legal_actions))
    if message.HasField("turn"):  # whose turn it is after the event, for every seat
        told = message.turn
        state.note_turn(told.seat if told.HasField("seat") else None, told.deadline_unix_ms)
    return prompt


async def follow_play(
    stub: MatchServiceAsyncStub,
    ticket: Ticket,
    decide: Decide,
    state: SeatState,
    on_event: OnEvent,
    judge: bool,
    sent: dict[int, spb.PlayAction],
    quiet_reopen: float,
) -> None:
    """Follow the seat from ``state.seq`` on one ``Play`` call, answering each turn once
    caught up to it: the actions go on the same stream and their results come back on it. An
    action whose result had not arrived when a call broke is sent again, with its request id,
    when its position is prompted again (``sent``, kept across calls by the caller). An action
    has no deadline of its own: a result that never comes is the seat's clock's to settle."""
    call = stub.Play(metadata=ticket.metadata)
    try:
        # Batched: each write's events on one message, which costs both ends less than one
        # message an event.
        opening = spb.PlayOpen(
            match_id=ticket.match_id, seat=ticket.seat, after_seq=state.seq, batched=True
        )
        if not await send(call, spb.PlayRequest(open=opening)):
            return
        turn: Prompt | None = None
        while True:
            try:
                async with asyncio.timeout(quiet_reopen):
                    message = await call.read()
            except TimeoutError:
                raise Quiet from None
            if not isinstance(message, spb.PlayResponse):  # grpc.aio.EOF: the call ended
                return
            if message.WhichOneof("kind") == "result":
                judged(message.result, sent, judge)
                continue
            turn = take(message, state, on_event) or turn
            if turn is not None and turn[0] == state.seq:
                seq, legal = turn
                turn = None
                for past in [s for s in sent if s < seq]:  # answered or overtaken
                    del sent[past]
                act = sent.get(seq) or await play_action(decide, state, seq, legal, judge)
                if act is not None:
                    sent[seq] = act
                    if not await send(call, spb.PlayRequest(act=act)):
                        return
    finally:
        call.cancel()


async def send(
    call: StreamStreamCall[spb.PlayRequest, spb.PlayResponse], request: spb.PlayRequest
) -> bool:
    """Write to the call; ``False`` if it has ended meanwhile (the match ended while the seat
    decided, the server went away): the caller then leaves this call and opens another from
    the seat's last seq, which sends what this one had no time to (an ended match's last
    entries). Such a write fails on its own terms (INTERNAL "Internal error from Core" while
    the connection drops), which says nothing of the match; a call the server ended with any
    other refusal raises it, as a unary call would have."""
    try:
        await call.write(request)
    except grpc.aio.AioRpcError as error:
        if error.code() in RETRYABLE or error.code() == grpc.StatusCode.INTERNAL:
            return False
        raise
    except asyncio.InvalidStateError:  # the call is over: how did it end?
        code = await call.code()
        if code in RETRYABLE or code in (grpc.StatusCode.OK, grpc.StatusCode.INTERNAL):
            return False
        details = await call.details()
        raise grpc.aio.AioRpcError(
            code, grpc.aio.Metadata(), grpc.aio.Metadata(), details
        ) from None
    return True


async def choose(
    decide: Decide, state: SeatState, legal: list[pb.Action], judge: bool
) -> int | None:
    """The seat's decision among ``legal``, or ``None`` if it abstains: ``state.legal`` holds
    the legal actions while ``decide`` thinks. A decision outside them is a ValueError here,
    unless ``judge`` leaves it to the server."""
    legal_now = [codec.action_from_pb(a) for a in legal]
    state.legal = legal_now
    try:
        action = await decide(state)
    except Abstain:
        return None
    finally:
        state.legal = []
    if action not in legal_now and not judge:
        raise ValueError(f"the bot chose {action}, which is not a legal action")
    return action


async def play_action(
    decide: Decide, state: SeatState, seq: int, legal: list[pb.Action], judge: bool
) -> spb.PlayAction | None:
    """The seat's decision at ``seq`` as a PlayAction with a fresh request id (drawn at
    random, so that nobody can guess and spend it first), or ``None`` if it abstains."""
    action = await choose(decide, state, legal, judge)
    if action is None:
        return None
    return spb.PlayAction(
        action=codec.action_to_pb(action), expected_seq=seq, request_id=secrets.token_hex(16)
    )


CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
"""Each status code by its number, as an ActionResult carries it."""


READ_ON: Final = frozenset(
    {grpc.StatusCode.OK, grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION}
)
"""What a seat reads on after whoever judges: see :func:`reads_on`."""


def reads_on(code: grpc.StatusCode, judge: bool) -> bool:
    """Whether a seat reads on after its action was answered with ``code``, on either kind of
    call: OK; ABORTED (the server's clock played for the seat meanwhile); FAILED_PRECONDITION
    (the match ended meanwhile); and, when the server judges (``judge``), INVALID_ARGUMENT: a
    refused action is its verdict, logged as the seat's fault, not a failure of this loop (the
    seat is asked again, or its clock plays)."""
    return code in READ_ON or (judge and code == grpc.StatusCode.INVALID_ARGUMENT)


def judged(result: spb.ActionResult, sent: dict[int, spb.PlayAction], judge: bool) -> None:
    """Take an action's result: read on as :func:`reads_on` says; any other code is raised,
    as the unary call would have raised it. An action refused with a code worth retrying
    (UNAVAILABLE: the server could not tell whether its write stands) stays in ``sent``, so
    that the next call sends it again with the same request id."""
    code = CODES.get(result.code, grpc.StatusCode.UNKNOWN)
    if code not in RETRYABLE:  # else the reopened call sends it again, with its request id
        for seq, act in list(sent.items()):
            if act.request_id == result.request_id:
                del sent[seq]
    if reads_on(code, judge):
        return
    raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), result.message)
