"""The Play call: a seat's events and its actions on one bidirectional stream.

The seat's events and one result per action share one bounded queue, the seat's reader queue
(a result is an :class:`~cardarena.server.hosting.Aside` among the match's messages), read by
the call itself: each message is handed on once, with no task in between. A client that stops
reading overflows it and the call ends (UNAVAILABLE; resume from the last seq). When the match
ends, the result of the action in flight (the one that ended it) is sent before the stream
closes.

A call opened with ``PlayOpen.batched`` gets each live write's events on one message (the
first in ``event``, the rest in ``more_events``), made once for every batched reader that sees
the write alike (``hosting.ToldBatch``): fewer messages, each of which costs the event loop
more than its bytes do.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc

from cardarena.v1 import service_pb2 as spb

from .. import metrics
from ..errors import BadRequest
from ..hosting import Aside, Subscriber, steady
from .requests import REQUEST_ID, authorize, check_seat, credential
from .status import Context, Refused, refusal_of, refusals
from .streams import response
from .wire import Undecodable

if TYPE_CHECKING:
    from .service import MatchService

PLAY_QUEUE = 2048
"""Messages a Play call may have waiting for its client; past that the client is not
reading, and the call ends (UNAVAILABLE: resume from the last seq)."""


OPEN_SECONDS = 10.0
"""How long a Play call may wait for its PlayOpen before it is ended (DEADLINE_EXCEEDED):
a call that names no seat holds only a place of its address's (``streams.OPENING_CALLS``),
and must not hold it for ever."""


class PlayCall:
    """One open Play call."""

    def __init__(
        self,
        service: MatchService,
        requests: AsyncIterator[spb.PlayRequest | Undecodable],
        context: Context,
    ) -> None:
        self.service = service
        self.requests = requests
        self.context = context
        self.drop = service.streams.dropper(context)
        self.reader: Subscriber | None = None
        """The seat's reader queue, once the stream has opened: where results go."""
        self.acting: asyncio.Task[None] | None = None
        """The task that reads the call's actions and applies them, one at a time: never
        cancelled in the middle of one (:meth:`_stop_acting`), so that an action runs in it
        to its end without a task of its own (``hosting.steady``)."""
        self.idle = asyncio.Event()
        """Set while no action is being applied."""
        self.idle.set()
        self.stopping = False
        """The call is ending: the acting task stops after the action in hand, if any."""

    def send(self, message: spb.PlayResponse | BaseException) -> None:
        assert self.reader is not None  # actions are read only once the stream has opened
        self.reader.offer(Aside(message))  # a full queue drops the call

    async def run(self) -> AsyncIterator[spb.PlayResponse | bytes]:
        opening = await self._opening()
        hosted = await self.service.opened_on(opening.match_id, opening.seat, self.context)
        check_seat(hosted, opening.seat)
        authorize(hosted, opening.seat, self.context)
        events = self.service.streams.events(
            hosted,
            opening.seat,
            opening.after_seq,
            context=self.context,
            on_drop=self.drop,
            size=PLAY_QUEUE,
            opened=lambda reader: self._opened(reader, opening),
            batched=opening.batched,
        )
        try:
            async with contextlib.aclosing(events) as stream:
                async for item in stream:
                    if metrics.STAGE_TIMES:
                        metrics.begin()
                    answer = response(spb.PlayResponse, item)
                    if metrics.STAGE_TIMES:
                        metrics.lap("send: respond")
                    yield answer
                    del item, answer  # a stream waits long between messages: hold none of them
            # The match has ended: the answer to the action that ended it, then no more (an
            # action sent after the end is not read, let alone answered).
            await self.idle.wait()
            self._stop_acting()
            assert self.reader is not None
            for _ in range(self.reader.queue.qsize()):
                last = self.reader.queue.get_nowait()
                if isinstance(last, Aside):
                    yield response(spb.PlayResponse, last)
        finally:
            self._stop_acting()

    def _opened(self, reader: Subscriber, opening: spb.PlayOpen) -> None:
        self.reader = reader
        self.acting = asyncio.create_task(self._act(opening))
        steady(self.acting)

    def _stop_acting(self) -> None:
        """End the acting task: at once while it waits for an action, else once the action
        in hand is done (it is never cancelled half-way: see :attr:`acting`)."""
        self.stopping = True
        if self.acting is not None and self.idle.is_set():
            self.acting.cancel()

    async def _opening(self) -> spb.PlayOpen:
        # A caller whose token is a seat's here proves who it is: only anonymous calls count
        # against the places for calls that have not opened yet.
        token = credential(self.context)
        proven = self.service.arena.holds_seat(token)
        streams = self.service.streams
        with streams.opening_seat(token) if proven and token else streams.opening(self.context):
            try:
                first = await asyncio.wait_for(anext(aiter(self.requests), None), OPEN_SECONDS)
            except TimeoutError:
                raise Refused(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"no PlayOpen within {OPEN_SECONDS:g} s of opening Play: send it first",
                ) from None
        if isinstance(first, Undecodable):
            self.service.guard.throttles.warn(
                self.context, "undecodable_request", type=first.type_name
            )
            raise BadRequest(first.message)
        if first is None or first.WhichOneof("kind") != "open":
            raise BadRequest("send PlayOpen first, then actions")
        return first.open

    async def _act(self, opening: spb.PlayOpen) -> None:
        try:
            async for request in self.requests:
                self.idle.clear()
                try:
                    self.send(spb.PlayResponse(result=await self._result(opening, request)))
                    if metrics.STAGE_TIMES:
                        metrics.lap("result")
                finally:
                    self.idle.set()
                if self.stopping:
                    return
        except grpc.aio.AbortError:
            return  # the call was ended (a dropped reader, a drain): nothing to answer
        except Exception as error:  # ends the call: never leave a bot waiting
            self.send(refusal_of(error))

    async def _result(
        self, opening: spb.PlayOpen, request: spb.PlayRequest | Undecodable
    ) -> spb.ActionResult:
        """One PlayAction, answered as its result (a refusal too: the stream stays open). An
        undecodable message ends the call instead: nothing in it can be answered."""
        if isinstance(request, Undecodable):
            self.service.guard.throttles.warn(
                self.context, "undecodable_request", type=request.type_name
            )
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, request.message)
        if metrics.STAGE_TIMES:
            metrics.begin()
        act = request.act
        # Echoed only once it is known to be an id (at most 64 characters): a huge one would
        # otherwise sit in the call's queue as many times as the client sends it.
        echo = act.request_id if REQUEST_ID.fullmatch(act.request_id) else ""
        result = spb.ActionResult(request_id=echo)
        try:
            with refusals():
                if request.WhichOneof("kind") != "act":
                    raise BadRequest("after PlayOpen, send only PlayAction messages")
                first, last = await self.service.act(
                    spb.SubmitActionRequest(
                        match_id=opening.match_id,
                        seat=opening.seat,
                        action=act.action,
                        expected_seq=act.expected_seq,
                        request_id=act.request_id,
                    ),
                    self.context,
                    time.perf_counter(),
                )
                result.first_seq, result.last_seq = first, last
        except Refused as refused:
            metrics.ERRORS.labels(refused.code.name).inc()
            result.code, result.message = refused.code.value[0], str(refused)
        return result
