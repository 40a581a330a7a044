"""A reader's stream of a match: snapshot, stored events, then live ones, without a gap (with
the public turns and the seat's prompts among them); and how a reader that stopped reading
is dropped."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import random
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import grpc

from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from .. import metrics
from ..hosting import (
    SUBSCRIBER_QUEUE,
    Aside,
    HostedMatch,
    Subscriber,
    Told,
    ToldBatch,
    ToldRun,
    runs,
)
from .limits import ClientHosts, RefusalPauses, fair_share
from .spectated import ProjectedLog, SpectatorHistories, seat_history
from .status import FELL_BEHIND, Context, Refused, abort
from .waiting import END_SPREAD, WAIT_SPREAD, Waiter, WaitingRoom

StreamItem = pb.Snapshot | pb.Event | Told | ToldBatch | ToldRun | pb.YourTurn | Aside
"""What :meth:`Streams.events` yields: the snapshot first, then events (the last of a write
with the turn that follows it; a batched seat's writes each as one ``ToldBatch``) and
prompts, and what the reader's own call put among them."""

Response = TypeVar("Response", spb.StreamEventsResponse, spb.WatchMatchResponse, spb.PlayResponse)

FIELDS = {pb.Snapshot: "snapshot", pb.Event: "event", pb.YourTurn: "your_turn"}
"""The field of a stream's response message that carries each kind of item (the same name in
StreamEventsResponse, WatchMatchResponse and PlayResponse)."""

TOLD_FIELDS = {
    kind: (
        kind.DESCRIPTOR.fields_by_name["event"].number,
        kind.DESCRIPTOR.fields_by_name["turn"].number,
    )
    for kind in (spb.StreamEventsResponse, spb.WatchMatchResponse, spb.PlayResponse)
}
"""The numbers of the event's and the turn's fields in each stream's message: a published
event goes out as bytes made once for every reader of a kind (:meth:`Told.wire`)."""

MORE_EVENTS = {
    kind: kind.DESCRIPTOR.fields_by_name["more_events"].number
    for kind in (spb.StreamEventsResponse, spb.PlayResponse)
}
"""The field of a seat's stream message that holds the rest of a write's events, on a
stream that asked for them (``PlayOpen.batched``, ``StreamEventsRequest.batched``:
:meth:`ToldBatch.wire`)."""

MORE_MESSAGES = spb.WatchMatchResponse.DESCRIPTOR.fields_by_name["more"].number
"""The field of a WatchMatchResponse that holds the messages after it on a batched
spectator's stream (``WatchMatchRequest.batched``: :meth:`ToldRun.wire`)."""

SPECTATOR_FRAME = 0.1
"""Seconds a batched spectator's stream waits after each message before the next, while
whatever comes meanwhile gathers into it: a person sees ten moves a second at most, and a
match played by bots at hundreds of events a second costs each of its spectators ten
messages a second, not hundreds (each message is about 40 µs of the event loop, which the
match's players wait for)."""

FRAME_SPREAD = 1.5
"""A paced stream's pause is :data:`SPECTATOR_FRAME` times a random factor from 1 to this. Its
spectators are all woken by the same event, and with equal pauses they would go on sending in
step, dozens of messages in one turn of the loop ten times a second, right as the players
are told of the event; pauses of random length spread their messages over the frame."""


def response(kind: type[Response], item: StreamItem) -> Response | bytes:
    """``item`` as a message of the stream ``kind`` (a told turn in its event's message), or
    as that message serialized already: a published event, whose bytes every reader of its
    kind shares (the registration sends bytes as they are, ``wire.py``). An :class:`Aside` is
    the call's own message already, or the error that ends the call: raised."""
    if isinstance(item, Aside):
        message = item.message
        if isinstance(message, BaseException):
            raise message
        if not isinstance(message, kind):
            raise TypeError(f"a {type(message).__name__} on a {kind.__name__} stream")
        return message
    if isinstance(item, Told):
        event_field, turn_field = TOLD_FIELDS[kind]
        return item.wire(event_field, turn_field)
    if isinstance(item, ToldBatch):
        if kind not in MORE_EVENTS:
            raise TypeError(f"a batch of events on a {kind.__name__} stream")
        event_field, turn_field = TOLD_FIELDS[kind]
        return item.wire(event_field, turn_field, MORE_EVENTS[kind])
    if isinstance(item, ToldRun):
        if kind is not spb.WatchMatchResponse:
            raise TypeError(f"a run of messages on a {kind.__name__} stream")
        event_field, turn_field = TOLD_FIELDS[kind]
        return item.wire(event_field, turn_field, MORE_MESSAGES)
    field: dict[str, Any] = {FIELDS[type(item)]: item}
    return kind(**field)


WATCH_STREAMS = 64
"""Spectators' streams (WatchMatch, WatchTournament) one address may hold open at once: each
costs every event of its match a message, so that one host cannot slow others' matches by
watching them a thousand times over (``serve --watch-streams``)."""

SEAT_STREAMS = 8
"""Streams (StreamEvents, Play) one seat of a match may hold open at once: its player needs
one, a few while a reconnection overlaps the stream it replaces."""


OPENING_CALLS = 64
"""Play calls one address may hold open before they say which seat they are for (PlayOpen):
until then a call holds no seat's place, so without this one host could hold thousands,
each with its memory, and never open one. A call whose token is a seat's of a running match
here proves who it is and is not counted (a bot host plays hundreds of seats from one
address)."""

WATCH_STREAMS_TOTAL = 2048
"""Spectators' streams the whole server holds open at once, from every address together: the
per-address cap alone let 40 addresses hold 2,560 streams of one match."""

OPENING_CALLS_TOTAL = 1024
"""Anonymous Play calls without a PlayOpen yet, the whole server together."""

MATCH_SPECTATORS = 64
"""Spectators' streams of one match at once (on this replica): each costs every event of that
match a message, which its players wait for. The flood benchmark measured a victim's p99 at
1.2-2x its quiet figure with 64 spectators and 10-100x with 128 or 256; a match that more
people watch is watched through more replicas, each with its own places."""

MATCH_SPECTATORS_PER_ADDRESS = 8
"""Spectators' streams of one match from one address: a person watches a match once or twice;
without this, four addresses at 64 each held every place of a match."""

MATCH_UNBATCHED_SPECTATORS = 2
"""Of a match's spectators' streams, those that did not ask for batches
(``WatchMatchRequest.batched``): each costs the match a message an event, where a batched one
costs at most ten a second (:data:`SPECTATOR_FRAME`), and its messages go out as the players'
do, on the event that wakes them all. Under the flood benchmark's spectators (every place of
the victim's match taken), 8 such places put the victim's p99 at 2.6-2.8x its quiet figure,
2 at 1.6-1.7x, 1 at 1.6-1.7x: two leave room for a client that cannot batch, and tell the
rest to ask."""


class PlacesTaken(Refused):
    """RESOURCE_EXHAUSTED for want of a place of one match (its own, or its address's there):
    one that a spectator may wait for (:mod:`.waiting`)."""


class Streams:
    """Opens readers' streams, as many at once as the caps allow; ``refuse_new`` says why none
    may open now (a drain)."""

    def __init__(
        self,
        refuse_new: Callable[[], None],
        hosts: ClientHosts,
        watch_streams: int = WATCH_STREAMS,
    ) -> None:
        self.refuse_new = refuse_new
        self.hosts = hosts
        self.watch_streams = watch_streams
        self.opening_calls = OPENING_CALLS
        self.watch_total = WATCH_STREAMS_TOTAL
        self.opening_total = OPENING_CALLS_TOTAL
        self.pauses = RefusalPauses()
        """A spectator refused for want of places hears so after a pause (:meth:`spectating`)."""
        self.waiting = WaitingRoom()
        """Spectators waiting for a place of a full match (:mod:`.waiting`)."""
        self.histories = SpectatorHistories()
        """What each watched match's spectators see of its log, made once for all of them."""
        self._open: Counter[tuple[str, ...]] = Counter()
        self._holders: dict[str, set[str]] = {"watch": set(), "opening": set()}
        """The addresses holding places of each shared kind now (for their fair share)."""
        self._aborts: set[asyncio.Task[None]] = set()

    @contextlib.contextmanager
    def watching(
        self, context: Context, match_id: str | None = None, *, batched: bool = True
    ) -> Iterator[None]:
        """Hold one of the spectator streams of the call's address (:class:`ClientHosts`),
        of the server and, watching a match, of that match (one of its unbatched ones unless
        ``batched``) while the block runs; RESOURCE_EXHAUSTED if any of them is full."""
        with self._shared(
            "watch", context, self.watch_streams, self.watch_total, "spectator streams"
        ):
            if match_id is None:
                yield
                return
            key = ("spectators", match_id)
            with contextlib.ExitStack() as held:
                if not batched:  # first: a refusal that asking for batches would cure says so
                    held.enter_context(
                        self._holding(
                            (*key, "unbatched"),
                            MATCH_UNBATCHED_SPECTATORS,
                            "spectator streams of this match without"
                            " WatchMatchRequest.batched (ask for it)",
                            PlacesTaken,
                        )
                    )
                held.enter_context(
                    self._holding(
                        key, MATCH_SPECTATORS, "spectator streams of this match", PlacesTaken
                    )
                )
                held.enter_context(
                    self._holding(
                        (*key, self.hosts.of(context)),
                        MATCH_SPECTATORS_PER_ADDRESS,
                        "spectator streams of this match from this address",
                        PlacesTaken,
                    )
                )
                try:
                    yield
                finally:
                    held.close()
                    if self.waiting.waiting(match_id):
                        self.waiting.freed(
                            match_id,
                            functools.partial(self._may_watch, key),
                            functools.partial(self._watching_from, key),
                        )

    def _watching_from(self, key: tuple[str, ...], address: str) -> int:
        """How many places of the match ``key`` ``address`` holds."""
        return self._open[(*key, address)]

    def _may_watch(self, key: tuple[str, ...], waiter: Waiter) -> bool:
        """Whether ``waiter`` may take a place of the match ``key`` freed: its address holds
        fewer there than it may and, one that did not ask for batches, an unbatched place is
        free."""
        if self._open[(*key, waiter.address)] >= MATCH_SPECTATORS_PER_ADDRESS:
            return False
        return waiter.batched or self._open[(*key, "unbatched")] < MATCH_UNBATCHED_SPECTATORS

    @contextlib.asynccontextmanager
    async def spectating(
        self, context: Context, hosted: HostedMatch | None = None, *, batched: bool = True
    ) -> AsyncIterator[None]:
        """:meth:`watching` for a spectator's call. A spectator of a match whose places are
        full waits for one (:mod:`.waiting`); any other refused for want of places (and one
        that may not wait) hears so after a pause (:class:`.limits.RefusalPauses`), so that
        a crowd refused together does not come back together."""
        address = self.hosts.of(context)
        match_id = None if hosted is None else hosted.match_id
        deadline: float | None = None
        with contextlib.ExitStack() as held:
            while True:
                try:
                    held.enter_context(self.watching(context, match_id, batched=batched))
                    break
                except PlacesTaken as refused:
                    again = deadline is not None
                    if (
                        hosted is None
                        or hosted.readers.finished
                        or not self.waiting.admits(address)
                    ):
                        if not again:  # one that waited has been slow enough to answer
                            await self.pauses.pause(address)
                        raise
                    if deadline is None:  # spread: a crowd that came together leaves apart
                        wait = self.waiting.seconds * random.uniform(*WAIT_SPREAD)
                        deadline = asyncio.get_running_loop().time() + wait
                    await self._wait_for_place(
                        hosted, address, refused, deadline, again=again, batched=batched
                    )
                except Refused as refused:
                    if refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED and deadline is None:
                        await self.pauses.pause(address)
                    raise
            yield

    async def _wait_for_place(
        self,
        hosted: HostedMatch,
        address: str,
        refused: Refused,
        deadline: float,
        *,
        again: bool,
        batched: bool,
    ) -> None:
        """Wait for a place of ``hosted`` until ``deadline`` (the loop's clock; ``again``:
        woken before, someone else took the place); refused as ``refused`` was once it has
        passed, or, if the match has ended, told so (woken by a place its end freed, after a
        pause: :data:`.waiting.END_SPREAD`)."""
        woken = await self.waiting.wait(
            hosted.match_id, address, deadline, first=again, batched=batched
        )
        if hosted.readers.finished:
            if woken:
                await asyncio.sleep(random.uniform(*END_SPREAD))
            raise Refused(
                refused.code,
                "the match ended while this stream waited for a place: watch it again to see"
                " its end",
            )
        if not woken:
            waited = self.waiting.seconds
            raise Refused(refused.code, f"{refused} (waited up to {waited:g} s for a place)")

    @contextlib.contextmanager
    def opening(self, context: Context) -> Iterator[None]:
        """Hold one of the places of the call's address (and of the server) for a Play call
        that has not yet named its seat; RESOURCE_EXHAUSTED if it holds all it may."""
        with self._shared(
            "opening",
            context,
            self.opening_calls,
            self.opening_total,
            "Play calls without a PlayOpen",
        ):
            yield

    def opening_seat(self, token: str) -> contextlib.AbstractContextManager[None]:
        """One of the few places of a seat's token for its Play calls not yet open: a proven
        caller is not counted against its address, but one token may not hold many either
        (anyone may make a match and hold a seat's token)."""
        digest = hashlib.sha256(token.encode()).hexdigest()
        return self._holding(
            ("opening-seat", digest),
            SEAT_STREAMS,
            "Play calls of this seat's token without a PlayOpen yet",
        )

    @contextlib.contextmanager
    def _shared(
        self, kind: str, context: Context, per_address: int, total: int, what: str
    ) -> Iterator[None]:
        """One of ``total`` places the whole server has for ``kind``, shared fairly: an
        address holds at most ``per_address`` and its share of the total (which leaves room
        for one address more than hold places now); once half the total is taken, no address
        gets more than :data:`.limits.FAIR_FLOOR`, so that the other half always has places for
        newcomers, however many came first."""
        address = self.hosts.of(context)
        holders = self._holders[kind]
        everyone = (kind, "*")
        used = self._open[everyone]
        cap = fair_share(per_address, total, used, len(holders - {address}))
        if used >= total:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the server holds {total} {what} from all addresses, the most it may:"
                " try again later",
            )
        with self._holding((kind, address), cap, f"{what} from this address"):
            holders.add(address)
            self._open[everyone] += 1
            try:
                yield
            finally:
                self._open[everyone] -= 1
                if not self._open[everyone]:
                    del self._open[everyone]
                if not self._open[(kind, address)] - 1:
                    holders.discard(address)

    @contextlib.contextmanager
    def _holding(
        self, key: tuple[str, ...], cap: int, what: str, refusal: type[Refused] = Refused
    ) -> Iterator[None]:
        if self._open[key] >= cap:
            raise refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{cap} {what} are open, the most there may be: close one first",
            )
        self._open[key] += 1
        try:
            yield
        finally:
            self._open[key] -= 1
            if not self._open[key]:
                del self._open[key]

    @contextlib.asynccontextmanager
    async def _slot(
        self, hosted: HostedMatch, seat: int | None, context: Context, batched: bool
    ) -> AsyncIterator[None]:
        if seat is None:
            async with self.spectating(context, hosted, batched=batched):
                yield
            return
        key = ("seat", hosted.match_id, str(seat))
        with self._holding(key, SEAT_STREAMS, f"streams of seat {seat} of this match"):
            yield

    @contextlib.asynccontextmanager
    async def _history(
        self, hosted: HostedMatch, seat: int | None
    ) -> AsyncIterator[ProjectedLog | None]:
        """A spectator's view of the match's log, kept for all of them; a seat reads its own."""
        if seat is None:
            with self.histories.watching(hosted.match_id) as kept:
                yield kept
        else:
            yield None

    def dropper(self, context: Context) -> Callable[[], None]:
        """What ends a stream whose client stopped reading: an UNAVAILABLE abort from a task
        of its own, which works even while the handler waits to write to that client."""
        dropped: list[bool] = []

        async def end() -> None:
            try:
                await abort(context, Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND))
            except Exception as error:
                # gRPC keeps the abort's exception on the call: without its traceback it
                # holds no frame that holds the call (see ``status.finish``).
                error.__traceback__ = None

        def drop() -> None:
            if not dropped:
                dropped.append(True)
                task = asyncio.ensure_future(end())
                self._aborts.add(task)
                task.add_done_callback(self._aborts.discard)

        return drop

    async def events(
        self,
        hosted: HostedMatch,
        seat: int | None,
        after_seq: int,
        *,
        context: Context,
        on_drop: Callable[[], None],
        size: int = SUBSCRIBER_QUEUE,
        opened: Callable[[Subscriber], None] | None = None,
        batched: bool = False,
    ) -> AsyncGenerator[StreamItem, None]:
        """Snapshot, then stored events after ``after_seq``, then live ones: gap-free. Live
        turns and prompts come among them; a turn at the snapshot's own seq is news too (the
        clock restarted with no event: a replica took the match over). ``opened`` is handed
        the reader (its queue holds ``size`` messages) once it exists, so that the call can put
        its own messages among the match's (:class:`Aside`). ``batched``: each live write's
        events come as one item (a seat's Play call or stream that asked for it); a spectator's (``seat``
        ``None``) come paced instead, everything since its last message as one item at most
        every :data:`SPECTATOR_FRAME` seconds, the history too. The stream ends once it has sent
        everything up to the match's last entry (``Readers.finished``). Close it when done
        (``contextlib.aclosing``): until then its reader stays subscribed, and holds one of
        its seat's streams or, a spectator's, one of its ``context``'s address's."""
        self.refuse_new()
        if metrics.STAGE_TIMES:  # the loop's idle time, from the first stream on
            metrics.watch_idle(asyncio.get_running_loop())
        paced = batched and seat is None
        async with self._slot(hosted, seat, context, batched), self._history(hosted, seat) as kept:
            async with hosted.lock:
                sub = hosted.readers.subscribe(seat, on_drop, size, batched=batched and not paced)
                if seat is not None:  # back after an outage: its clock runs from now
                    hosted.seat_back(seat)
                snapshot = hosted.snapshot(seat)
            metrics.SUBSCRIBERS.inc()
            opened_at = snapshot.seq
            try:
                if opened is not None:
                    opened(sub)
                yield snapshot
                # A stream lives as long as its match: it keeps none of the messages it sent.
                del snapshot
                # A spectator's history is what every spectator of the match is sent; a seat's
                # is made for this stream alone.
                if kept is not None:
                    seen = await kept.between(hosted, after_seq, opened_at)
                else:
                    seen = await seat_history(hosted, seat, after_seq, opened_at)
                for item in runs(seen) if paced else seen:
                    yield item
                del seen
                if paced:
                    async for frame in self._frames(hosted, sub, opened_at):
                        yield frame
                    return
                while not drained(hosted, sub):
                    live = await sub.queue.get()
                    if live is None:
                        raise Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND)
                    if isinstance(live, ToldBatch) and live.first_seq <= opened_at:
                        # A write partly in the snapshot (none is, while writes hold the
                        # match's lock): only its newer events, never one twice.
                        for told in live.items:
                            if told.seq > opened_at:
                                yield told
                    elif isinstance(live, Aside) or news(live, opened_at):
                        yield live
                    del live
            finally:
                metrics.SUBSCRIBERS.dec()
                hosted.readers.unsubscribe(sub)

    @staticmethod
    async def _frames(
        hosted: HostedMatch, sub: Subscriber, opened_at: int
    ) -> AsyncGenerator[Told | ToldRun, None]:
        """A paced reader's live messages: whatever its queue holds, as one message (or a few,
        :func:`runs`), then a pause of :data:`SPECTATOR_FRAME` seconds while the next
        gather. A spectator's queue holds only what :meth:`Readers.publish` tells every reader
        (``Told``: no prompt, no ``Aside``) and ``None`` when it is ended."""
        while not drained(hosted, sub):
            told: list[Told] = []
            ended = False
            item = await sub.queue.get()
            while True:
                if item is None:
                    ended = True
                    break
                if isinstance(item, Told) and news(item, opened_at):
                    told.append(item)
                if sub.queue.empty():
                    break
                item = sub.queue.get_nowait()
            for frame in runs(told):
                yield frame
            if ended:
                raise Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND)
            del told, item
            await asyncio.sleep(SPECTATOR_FRAME * random.uniform(1.0, FRAME_SPREAD))


def drained(hosted: HostedMatch, sub: Subscriber) -> bool:
    """Whether a stream has sent all it will: its queue is empty and the match's last entry
    was handed to it; UNAVAILABLE if it was dropped, with nothing left to send."""
    if not sub.queue.empty():
        return False
    if hosted.readers.finished:
        return True
    if sub.dropped:
        raise Refused(grpc.StatusCode.UNAVAILABLE, FELL_BEHIND)
    return False


def news(live: Told | ToldBatch | pb.YourTurn, opened_at: int) -> bool:
    """Whether a live item is news to a stream whose snapshot was at ``opened_at``: anything
    after it, and a turn alone at its very seq (the clock restarted with no event: a replica
    took the match over)."""
    return live.seq > opened_at or (
        isinstance(live, Told) and live.event is None and live.seq == opened_at
    )
