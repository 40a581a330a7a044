"""Readers of a match: a bounded queue each, and the projection of log entries for them.

A subscriber that falls a whole queue behind is dropped (its stream ends and the client
resumes from its last ``seq``), so that no reader can hold a match up.

Besides the log's events, every reader is told whose turn it is and the move deadline (a
``Turn``, on the message of the last event of every write that starts a move or changes whose
turn it is, alone when it changes with no event: :func:`turn_after`), and the seat to act what
it may do (its ``YourTurn``). Neither is a log event.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from cardarena.engine.jokers import NO_NAMES
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from .. import metrics
from .clock import restarts
from .jokers import JokerLedger
from .mailbox import Mailbox

if TYPE_CHECKING:
    from cardarena.engine import Match

    from .clock import MoveClock

SUBSCRIBER_QUEUE = 1024
"""Messages (events, turns, prompts) a reader may have waiting before it is dropped."""


PRIVATE_KINDS: frozenset[str | None] = frozenset({"dealt", "passed", "seat_faulted"})
"""The kinds of entry some reader may see otherwise than whole (``codec.project_pb``): a
write with none of them is told to every reader as it is."""

NOTED_KINDS: frozenset[str | None] = frozenset({"round_started", "match_ended", "match_cancelled"})
"""The kinds of entry :meth:`Readers.note` follows."""


Many = TypeVar("Many")
"""A message of several :class:`Told` (:class:`ToldBatch`, :class:`ToldRun`)."""


class Told:
    """A published event, and the turn that follows it if it is the last of its write: one
    message on the wire, so telling whose turn it is costs no message of its own (``event``
    is ``None`` for a turn with no event, ``turn`` ``None`` on every event but a write's last).

    Why it carries bytes: every reader of a kind gets the same ``Told``, and readers of
    different kinds the same one where their projections agree (a public event is the stored
    event itself), so the event is serialized once per publish, not once per reader, and each
    stream's message is made once per kind of stream message (:meth:`wire`) and then sent as
    bytes to every reader that gets it."""

    __slots__ = ("_turn_bytes", "_wire", "event", "payload", "turn")

    def __init__(
        self, event: pb.Event | None, turn: pb.Turn | None, payload: bytes | None = None
    ) -> None:
        self.event = event
        self.turn = turn
        self.payload = payload
        """The event serialized (made on first use when not given)."""
        self._turn_bytes: bytes | None = None
        self._wire: tuple[int, int, bytes] | None = None

    @property
    def seq(self) -> int:
        if self.event is not None:
            return self.event.seq
        assert self.turn is not None  # a Told holds an event, a turn or both
        return self.turn.seq

    def wire(self, event_field: int, turn_field: int) -> bytes:
        """The stream message holding this event in field ``event_field`` and the turn in
        ``turn_field``, serialized: made once per pair of fields (a stream kind's), the same
        bytes for every reader of that kind."""
        made = self._wire
        if made is not None and made[0] == event_field and made[1] == turn_field:
            return made[2]
        parts = []
        if self.event is not None:
            parts.append(message_field(event_field, self.event_bytes()))
        if self.turn is not None:
            parts.append(message_field(turn_field, self.turn_bytes()))
        data = b"".join(parts)
        self._wire = (event_field, turn_field, data)
        return data

    def event_bytes(self) -> bytes:
        """The event serialized, made once (the stored bytes when the reader sees it whole)."""
        assert self.event is not None
        if self.payload is None:
            self.payload = self.event.SerializeToString()
        return self.payload

    def turn_bytes(self) -> bytes:
        """The turn serialized, made once."""
        assert self.turn is not None
        if self._turn_bytes is None:
            self._turn_bytes = self.turn.SerializeToString()
        return self._turn_bytes


BATCH_EVENTS = 256
"""Events one batched message holds at most: a write has a few, but a follower that catches
up on many writes publishes them together, and a message must stay small."""


class ToldBatch:
    """The events of one write on one message, for the readers that asked for it (a Play
    call opened with ``batched``): the first in the message's ``event``, the others in order
    in its ``more_events``, the turn of the last :class:`Told` (if any) in its ``turn``.

    Like a :class:`Told`, one batch is shared by every batched reader whose projections of
    the write agree (every one, for a write with no private entry), and its message is
    serialized once (:meth:`wire`), from the bytes each event's ``Told`` made once."""

    __slots__ = ("_wire", "items")

    def __init__(self, items: Sequence[Told]) -> None:
        assert len(items) > 1 and all(item.event is not None for item in items)
        self.items = tuple(items)
        self._wire: tuple[int, int, int, bytes] | None = None

    @property
    def seq(self) -> int:
        """The seq of its last event."""
        return self.items[-1].seq

    @property
    def first_seq(self) -> int:
        return self.items[0].seq

    def wire(self, event_field: int, turn_field: int, more_field: int) -> bytes:
        """The stream message holding the first event in ``event_field``, the others in
        ``more_field`` and the last one's turn in ``turn_field``, serialized (in field order,
        as protobuf would): made once, the same bytes for every reader that gets the batch."""
        made = self._wire
        if made is not None and made[:3] == (event_field, turn_field, more_field):
            return made[3]
        first, *more = self.items
        parts = [message_field(event_field, first.event_bytes())]
        last = self.items[-1]
        after = [message_field(more_field, item.event_bytes()) for item in more]
        turn = [message_field(turn_field, last.turn_bytes())] if last.turn is not None else []
        if turn_field < more_field:
            parts += turn + after
        else:
            parts += after + turn
        data = b"".join(parts)
        self._wire = (event_field, turn_field, more_field, data)
        return data


def batched(items: Sequence[Told]) -> list[Told | ToldBatch]:
    """``items`` (one write's, in order) as a batched reader's queue takes them: one item, in
    chunks of at most :data:`BATCH_EVENTS` events; a lone :class:`Told` as it is."""
    return _chunked(items, ToldBatch)


def _chunked(items: Sequence[Told], whole: Callable[[Sequence[Told]], Many]) -> list[Told | Many]:
    """``items`` in chunks of at most :data:`BATCH_EVENTS`, each made ``whole``; one alone as
    it is."""
    chunks: list[Told | Many] = []
    for start in range(0, len(items), BATCH_EVENTS):
        chunk = items[start : start + BATCH_EVENTS]
        chunks.append(chunk[0] if len(chunk) == 1 else whole(chunk))
    return chunks


class ToldRun:
    """Several messages of a stream on one, for a spectator that asked for batches
    (``WatchMatchRequest.batched``): the first :class:`Told`'s message as it is, each later
    one's nested in its ``more`` field, exactly as it would have been sent alone (its event
    and its turn, or a turn alone). Nothing is merged, so a batched spectator learns whose
    turn it was at every step, as an unbatched one does; each nested message is the bytes its
    ``Told`` made once for every reader."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Told]) -> None:
        assert len(items) > 1
        self.items = tuple(items)

    @property
    def seq(self) -> int:
        return self.items[-1].seq

    def wire(self, event_field: int, turn_field: int, more_field: int) -> bytes:
        """The first message's fields, then each later message as a ``more_field`` entry."""
        first, *more = self.items
        nested = [message_field(more_field, told.wire(event_field, turn_field)) for told in more]
        return b"".join([first.wire(event_field, turn_field), *nested])


def runs(items: Sequence[Told]) -> list[Told | ToldRun]:
    """What a batched spectator was handed since its last message, several writes' items in
    order, as the fewest messages: runs of at most :data:`BATCH_EVENTS`; a lone ``Told`` as
    it is."""
    return _chunked(items, ToldRun)


def message_field(number: int, body: bytes) -> bytes:
    """A length-delimited protobuf field (a message, bytes or string field): its key, length
    and ``body``. Messages joined this way are one message of the fields concatenated, as
    protobuf's wire format defines: an answer made of bytes kept is sent without a message
    made for it."""
    key = (number << 3) | 2
    size = len(body)
    if key < 0x80 and size < 0x80:
        return bytes((key, size)) + body
    return _varint(key) + _varint(size) + body


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Aside:
    """What a reader's own call puts on its stream between the match's messages (a Play
    call's results, or the error that ends it), passed on in order: it belongs to no seq.
    The message is the stream's own response type (the api layer checks it)."""

    message: object


Item = Told | ToldBatch | pb.YourTurn | Aside
"""What a reader's queue carries after the snapshot."""


@dataclass(eq=False)
class Subscriber:
    """One open event stream: who reads it, and a bounded queue of its next events."""

    seat: int | None
    size: int = SUBSCRIBER_QUEUE
    batched: bool = False
    """Whether it takes each write's events as one item (:class:`ToldBatch`)."""
    queue: Mailbox[Item | None] = field(init=False)
    dropped: bool = False
    on_drop: Callable[[], None] | None = None
    """Called once when the reader falls behind: the stream ends at once (UNAVAILABLE),
    even while it waits for a client that stopped reading."""

    def __post_init__(self) -> None:
        self.queue = Mailbox(self.size)

    def offer(self, item: Item) -> bool:
        """Queue ``item``; ``False`` (and dropped) if the reader fell a whole queue behind."""
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.drop()
            return False
        return True

    def drop(self) -> None:
        if not self.dropped:
            self.dropped = True
            if self.on_drop is not None:
                self.on_drop()


class PbProjector:
    """Follows the rounds of a stream of log entries so it knows which passes are private,
    and names the Jokers by the match's ``jokers`` ledger (none: a game without Jokers)."""

    def __init__(self, voluntary_pass: bool = False, jokers: JokerLedger | None = None) -> None:
        self.voluntary_pass = voluntary_pass
        self.jokers = jokers

    def track(self, event: pb.Event) -> None:
        if event.WhichOneof("kind") == "round_started":
            self.voluntary_pass = event.round_started.voluntary_pass


def project_for(event: pb.Event, seat: int | None, projector: PbProjector) -> pb.Event:
    """A stored entry as ``seat`` (``None``: a spectator) may see it."""
    projector.track(event)
    jokers = projector.jokers
    names = jokers.names(event, seat) if jokers is not None else NO_NAMES
    return codec.project_pb(event, seat, voluntary_pass=projector.voluntary_pass, names=names)


class Readers:
    """A match's open streams, what each kind of reader may see of its log as it grows, and
    since which seq each round's rule on passes holds."""

    def __init__(self, log: Any, *, voluntary_pass: bool = False) -> None:
        self.subscribers: set[Subscriber] = set()
        self.voluntary_pass = voluntary_pass
        """Whether the round now in play hides why a seat passed."""
        self.rounds: list[tuple[int, bool]] = []
        """``(seq, voluntary_pass)`` of each RoundStarted in the log, in order."""
        self.jokers = JokerLedger()
        """Each reader's names for the Jokers, at any seq (Triathlon)."""
        self.turn: tuple[int | None, int] = (None, 0)
        """The seat to act and its deadline (Unix ms) as the readers were last told."""
        self.finished = False
        """Whether the entry that ends the match (MatchEnded, MatchCancelled) has been handed
        to the readers, or was in the log when the match was loaded: a stream ends once it has
        sent what it was handed by then. Not the match's own ``ended``, which is true from the
        moment the rules end it, before its last write is durable and published."""
        self._log = log

    def subscribe(
        self,
        seat: int | None,
        on_drop: Callable[[], None] | None = None,
        size: int = SUBSCRIBER_QUEUE,
        *,
        batched: bool = False,
    ) -> Subscriber:
        sub = Subscriber(seat, size, batched, on_drop=on_drop)
        self.subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def publish(
        self,
        encoded: list[pb.Event],
        turn: pb.Turn | None = None,
        payloads: Sequence[bytes] | None = None,
    ) -> None:
        """Hand durable events to every reader, projected once per kind of reader, the
        ``turn`` that follows them on the last (alone if there is none). ``payloads``: the
        events as the store has them, serialized, which every reader that sees an event
        whole is sent as they are."""
        kinds: list[str | None] = [event.WhichOneof("kind") for event in encoded]
        last = len(encoded) - 1
        jokers = self.jokers
        for event in encoded:
            jokers.follow(event)
        if not PRIVATE_KINDS.intersection(kinds) and not jokers.shows_jokers(encoded):
            # most writes: every reader sees them whole
            shared = [
                Told(
                    event,
                    turn if index == last else None,
                    None if payloads is None else payloads[index],
                )
                for index, event in enumerate(encoded)
            ]
            if turn is not None and not encoded:
                shared.append(Told(None, turn))
            as_one: list[Told | ToldBatch] | None = None
            """The write as one message, for the readers that ask for it: made once."""
            for sub in list(self.subscribers):
                offered: Sequence[Item] = shared
                if sub.batched and len(shared) > 1:
                    offered = as_one = as_one or batched(shared)
                for public in offered:
                    if not self._offer(sub, public):
                        break
            self._note_kinds(encoded, kinds)
            if metrics.STAGE_TIMES:
                metrics.lap("publish")
            return
        told: dict[int, Told] = {}
        """One Told per distinct projection (by identity: a public event is projected to
        itself for every kind of reader), so that its bytes are made once."""
        projected: dict[int | None, list[Told]] = {}
        batches: dict[tuple[int, ...], list[Told | ToldBatch]] = {}
        """The write as one message per distinct projection (by its Tolds), for the readers
        that ask for it: a seat's own cards go only to that seat's streams."""
        for sub in list(self.subscribers):
            items = projected.get(sub.seat)
            if items is None:
                projector = PbProjector(self.voluntary_pass, jokers)
                items = projected[sub.seat] = []
                for index, event in enumerate(encoded):
                    seen = project_for(event, sub.seat, projector)
                    item = told.get(id(seen))
                    if item is None:
                        whole = payloads is not None and seen is event
                        item = told[id(seen)] = Told(
                            seen,
                            turn if index == last else None,
                            payloads[index] if whole and payloads is not None else None,
                        )
                    items.append(item)
                if turn is not None and not encoded:
                    items.append(told.setdefault(-1, Told(None, turn)))
            to_offer: Sequence[Item] = items
            if sub.batched and len(items) > 1:
                key = tuple(map(id, items))  # the Tolds live until the end of the call
                to_offer = batches.get(key) or batches.setdefault(key, batched(items))
            for each in to_offer:
                if not self._offer(sub, each):
                    break
        self._note_kinds(encoded, kinds)
        if metrics.STAGE_TIMES:
            metrics.lap("publish")

    def _note_kinds(self, encoded: list[pb.Event], kinds: list[str | None]) -> None:
        for event, kind in zip(encoded, kinds, strict=True):
            if kind in NOTED_KINDS:
                self.note(event)

    def prompt(self, seat: int, turn: Callable[[], pb.YourTurn]) -> None:
        """Tell ``seat`` (on each of its open streams) what it may do, made once if needed."""
        made: pb.YourTurn | None = None
        for sub in list(self.subscribers):
            if sub.seat == seat:
                made = made or turn()
                self._offer(sub, made)
        if metrics.STAGE_TIMES:
            metrics.lap("prompt")

    def turn_to_tell(
        self, seat: int | None, deadline: float, seq: int, *, new: bool
    ) -> pb.Turn | None:
        """The ``Turn`` telling readers that ``seat`` (``None``: nobody) is to act by
        ``deadline`` (Unix seconds, 0: no clock) at ``seq``: for a ``new`` move of the seat (it
        may be the same seat again, within the same millisecond), or if that is not what they
        were last told; ``None`` if there is nothing to tell, or nobody to tell it to."""
        deadline_ms = int(deadline * 1000) if seat is not None else 0
        if (seat, deadline_ms) == self.turn and not (new and seat is not None):
            return None
        self.turn = (seat, deadline_ms)
        if not self.subscribers:
            return None
        made = pb.Turn(seq=seq, deadline_unix_ms=deadline_ms)
        if seat is not None:
            made.seat = seat
        return made

    def _offer(self, sub: Subscriber, item: Item) -> bool:
        if sub.offer(item):
            return True
        self.subscribers.discard(sub)
        self._log.warning("subscriber_dropped", seat=sub.seat)
        return False

    def note(self, event: pb.Event) -> None:
        """Follow the log as it grows: each round's rule on passes, its Jokers, and its end."""
        self.jokers.follow(event)
        kind = event.WhichOneof("kind")
        if kind == "round_started":
            self.voluntary_pass = event.round_started.voluntary_pass
            self.rounds.append((event.seq, self.voluntary_pass))
        elif kind in ("match_ended", "match_cancelled"):
            self.finished = True

    def voluntary_at(self, seq: int) -> bool:
        """Whether the round the entry at ``seq`` belongs to allows voluntary passes."""
        at = bisect.bisect_right(self.rounds, (seq, True)) - 1
        return at >= 0 and self.rounds[at][1]

    def close(self) -> None:
        """End every stream: each reader resumes from its last seq elsewhere."""
        for sub in list(self.subscribers):
            sub.dropped = True
            with contextlib.suppress(asyncio.QueueFull):
                sub.queue.put_nowait(None)
        self.subscribers.clear()


class Turning(Protocol):
    """What :func:`turn_after` reads of a hosted match."""

    readers: Readers
    engine: Match
    clock: MoveClock
    last_seq: int
    cancelled: bool


def turn_after(match: Turning, entries: Sequence[pb.Event] = ()) -> pb.Turn | None:
    """What to tell the match's readers of whose turn it is and until when, as a snapshot taken
    now would say (a cancelled match has nobody to act), with ``entries`` as they are
    published: after entries that start a move (anything but faults alone:
    :func:`~.clock.restarts`), or when it changed otherwise (the clock restarted with no
    event)."""
    seat = None if match.cancelled else match.engine.to_act
    return match.readers.turn_to_tell(
        seat, match.clock.deadline, match.last_seq, new=restarts(entries)
    )
