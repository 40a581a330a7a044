"""The bots: what one seat of one match does, and what every client process counts.

Why apart from the load generator (``load.py``): a seat's play is the part that follows the
protocol (one ``StreamEvents`` stream per seat for the whole match, nothing polled) and the
part ``--pattern`` changes; the load generator only keeps the matches going.

* ``turns`` (the default): the stream's ``YourTurn`` prompt (or the first snapshot's
  ``to_act``/``legal_actions``) gives the seq and the legal actions; the seat submits a random
  one with that seq as ``expected_seq`` and stops at ``MatchEnded``. This is what a real bot does.
* ``replica``: for servers without ``YourTurn``. The bench chooses every match's seed, so each
  seat keeps a client-side engine replica dealt the same cards: the first event above the
  replica's seq is the next action; applying it yields the events the server derived from it,
  so the seat knows the batch's last seq, whose turn it is and its legal actions. The first
  snapshot is checked against the replica and every action is validated by it.
* ``resnapshot``: as ``replica`` for *when*, but before every action the seat reopens its stream
  with ``after_seq`` = its last seq and plays a random choice among the fresh snapshot's
  ``legal_actions``: the cost of a snapshot per action.
* ``play``: as ``turns``, on one bidirectional ``Play`` stream per seat (``playbot.py``).

With ``--rate`` each match acts on a fixed schedule (``pacing.py``) instead of as fast as the
answers come, and a latency runs from the action's scheduled time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import grpc

from cardarena.engine import PASS, Match
from cardarena.engine.actions import CHOOSE_TRUMP, EXCLUDE
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.codec import action_from_pb, action_to_pb, card_from_pb

from .common import Kind, Pattern
from .pacing import Pacer

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

UNARY_TIMEOUT = 30.0


class Divergence(Exception):
    """The stream told something the client-side replica of the match does not accept."""


class MatchFailed(Exception):
    """An RPC of this match failed (already counted); the slot gives the match up."""


@dataclasses.dataclass(frozen=True)
class WorkerConfig:
    addresses: tuple[str, ...]  # one per server process: replicas of one store, or one server
    kind: Kind
    worker: int
    slots: int
    game: str
    players: int
    window: float
    channels: int
    setup_concurrency: int
    setup_timeout: float
    pattern: Pattern
    seed: int
    rate: float = 0.0  # actions per second per match; 0: closed loop
    batched: bool = True  # PlayOpen.batched, StreamEventsRequest.batched: a write on one message
    tidy: bool = False  # cancel the matches it made once its window ends, as a host that stops


@dataclasses.dataclass
class Stats:
    """What one client process saw; merged by the parent."""

    actions: int = 0
    messages: int = 0
    latencies: list[float] = dataclasses.field(default_factory=list)
    """Seconds to each acknowledgement: from the send, or (paced) from the scheduled time."""
    service: list[float] = dataclasses.field(default_factory=list)
    """Paced only: seconds from the send itself to the acknowledgement."""
    errors: Counter[str] = dataclasses.field(default_factory=Counter)
    details: dict[str, str] = dataclasses.field(default_factory=dict)
    """The first error's details (the status message) per key of ``errors``."""
    completed: int = 0
    abandoned: int = 0
    started: int = 0
    snapshots: int = 0
    create_seconds: float = 0.0
    stream_seconds: float = 0.0
    cpu_seconds: float = 0.0
    fds: int = 0  # this process's open files once its streams are open
    failure: str = ""
    counting: bool = False

    def acknowledged(self, sent: float, due: float | None) -> None:
        """One action acknowledged now, sent at ``sent``, scheduled (paced) for ``due``."""
        if not self.counting:
            return
        now = time.perf_counter()
        self.actions += 1
        if due is None:
            self.latencies.append(now - sent)
        else:
            self.latencies.append(now - due)
            self.service.append(now - sent)

    def error(self, what: str, error: BaseException) -> None:
        if isinstance(error, grpc.aio.AioRpcError):
            key = f"{what} {error.code().name}"
            self.details.setdefault(key, error.details() or "")
        else:
            key = f"{what} {type(error).__name__}"
        self.errors[key] += 1


@contextlib.contextmanager
def failing_match(stats: Stats, what: str) -> Iterator[None]:
    """A failed RPC ``what`` is counted and gives the match up (``MatchFailed``)."""
    try:
        yield
    except grpc.aio.AioRpcError as error:
        stats.error(what, error)
        raise MatchFailed from error


@dataclasses.dataclass
class Table:
    """One match as its four bots know it."""

    match_id: str
    seed: bytes
    tokens: list[str]
    join_seqs: list[int]
    api: MatchServiceAsyncStub  # where the match was created
    seat_apis: list[MatchServiceAsyncStub]  # where each seat joins, streams and submits
    pacer: Pacer | None = None  # the match's schedule with --rate; None: closed loop


Act = Callable[[int, Sequence[pb.Action], Stats], Awaitable[None]]
"""How a seat acts at ``seq`` with these legal actions (it counts into the stats)."""


SEAT_STREAMS = (spb.StreamEventsResponse, spb.PlayResponse)
"""The responses of the calls a seat streams on: StreamEvents, or Play (``--pattern play``)."""


@dataclasses.dataclass(eq=False)
class SeatBot:
    """One seat: its token, its one stream, and (replica patterns) its replica of the match."""

    table: Table
    seat: int
    replica: Match | None
    rng: random.Random
    config: WorkerConfig
    api: MatchServiceAsyncStub = dataclasses.field(init=False)
    metadata: tuple[tuple[str, str], ...] = dataclasses.field(init=False)
    covered: int = dataclasses.field(init=False, default=0)
    """The replica is at this seq of the server's log."""
    snapshot: pb.Snapshot = dataclasses.field(init=False, default_factory=pb.Snapshot)
    call: grpc.aio.UnaryStreamCall[spb.StreamEventsRequest, spb.StreamEventsResponse] = (
        dataclasses.field(init=False)
    )
    submitted: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        self.api = self.table.seat_apis[self.seat]
        self.metadata = (("authorization", f"Bearer {self.table.tokens[self.seat]}"),)

    @property
    def pattern(self) -> Pattern:
        return self.config.pattern

    @property
    def trusted(self) -> bool:
        """The no-op server's snapshots and prompts are canned: only a real one's are checked."""
        return self.config.kind != "noop"

    async def open(self, after_seq: int, stats: Stats) -> pb.Snapshot:
        """(Re)open the seat's stream and return its snapshot."""
        request = spb.StreamEventsRequest(
            match_id=self.table.match_id,
            seat=self.seat,
            after_seq=after_seq,
            batched=self.config.batched,
        )
        self.call = self.api.StreamEvents(request, metadata=self.metadata)
        with failing_match(stats, "StreamEvents"):
            first = await self.call.read()
        return self.take_snapshot(first, "the stream", stats)

    def take_snapshot(self, first: object, stream: str, stats: Stats) -> pb.Snapshot:
        """The snapshot a (re)opened stream starts with, counted and kept: StreamEvents' and
        Play's alike. A stream that starts with anything else has diverged."""
        if not isinstance(first, SEAT_STREAMS) or not first.HasField("snapshot"):
            raise Divergence(f"{stream} did not start with a snapshot")
        stats.snapshots += 1
        self.snapshot = first.snapshot
        return first.snapshot

    def check(self, snapshot: pb.Snapshot) -> None:
        """A real server's first snapshot must agree with the replica."""
        self.covered = snapshot.seq
        if self.replica is None or not self.trusted:
            return
        if snapshot.HasField("to_act") and snapshot.to_act != self.replica.to_act:
            raise Divergence(f"to_act {snapshot.to_act} != replica {self.replica.to_act}")
        legal = [action_from_pb(a) for a in snapshot.legal_actions]
        if legal and legal != self.replica.legal_actions():
            raise Divergence("the snapshot's legal actions differ from the replica's")

    def cancel(self) -> None:
        with contextlib.suppress(AttributeError):
            self.call.cancel()

    async def read(self, stats: Stats) -> spb.StreamEventsResponse | None:
        """The next message, or ``None`` when the server ended the stream."""
        with failing_match(stats, "StreamEvents"):
            message = await self.call.read()
        if not isinstance(message, spb.StreamEventsResponse):
            return None
        if stats.counting and not message.HasField("snapshot"):
            stats.messages += 1
        return message

    async def play(self, stats: Stats) -> None:
        if self.pattern == "turns":
            await self.play_turns(stats)
        else:
            await self.play_replica(stats)

    async def first_turn(self, act: Act, stats: Stats) -> bool:
        """``act`` on the snapshot when it is this seat's turn; False if the match is over."""
        snapshot = self.snapshot
        if snapshot.over:
            return False
        if snapshot.HasField("to_act") and snapshot.to_act == self.seat:
            await act(snapshot.seq, snapshot.legal_actions, stats)
        return True

    async def play_turns(self, stats: Stats) -> None:
        """Act on the snapshot and on each YourTurn with a random legal action; stop at the end."""
        if not await self.first_turn(self.submit, stats):
            return
        while True:
            message = await self.read(stats)
            if message is None:
                raise Divergence("the stream ended before MatchEnded")
            if message.HasField("your_turn"):
                await self.submit(message.your_turn.seq, message.your_turn.legal_actions, stats)
            elif ends(message):
                return

    async def play_replica(self, stats: Stats) -> None:
        """Fold each action into the replica; act when the replica says it is our turn."""
        replica = self.replica
        assert replica is not None
        if replica.to_act == self.seat:
            await self.act_from_replica(stats)
        while not replica.over:
            message = await self.read(stats)
            if message is None:
                raise Divergence("the stream ended before the match did")
            if not message.HasField("event"):
                continue  # a snapshot after a reopen, or a YourTurn (not needed here)
            event = message.event
            if event.seq <= self.covered:
                continue  # derived in the replica when it applied the batch's action
            if event.seq != self.covered + 1:
                raise Divergence(f"event {event.seq} after seq {self.covered}")
            seat, action = action_in(event)
            try:
                derived = replica.apply(seat, action)
            except Exception as error:
                raise Divergence(f"seq {event.seq}: {error}") from error
            self.covered = event.seq + len(derived) - 1
            if replica.to_act == self.seat:
                await self.act_from_replica(stats)

    async def act_from_replica(self, stats: Stats) -> None:
        assert self.replica is not None
        legal: list[int] = []
        if self.pattern == "resnapshot":
            self.call.cancel()
            snapshot = await self.open(self.covered, stats)
            if self.trusted:
                if snapshot.seq != self.covered:
                    raise Divergence(f"snapshot at {snapshot.seq}, replica at {self.covered}")
                legal = [action_from_pb(a) for a in snapshot.legal_actions]
        choice = self.rng.choice(legal or self.replica.legal_actions())
        await self.submit(self.covered, [action_to_pb(choice)], stats)

    async def submit(self, seq: int, legal: Sequence[pb.Action], stats: Stats) -> None:
        if not legal:
            raise Divergence(f"seat {self.seat} is to act at {seq} with no legal action")
        self.submitted += 1
        request = spb.SubmitActionRequest(
            match_id=self.table.match_id,
            seat=self.seat,
            action=self.rng.choice(legal),
            expected_seq=seq,
            request_id=f"s{self.seat}a{self.submitted}",
        )
        due = None if self.table.pacer is None else await self.table.pacer.wait()
        started = time.perf_counter()
        try:
            await self.api.SubmitAction(request, metadata=self.metadata, timeout=UNARY_TIMEOUT)
        except grpc.aio.AioRpcError as error:
            stats.error("SubmitAction", error)
            if error.code() == grpc.StatusCode.ABORTED and self.pattern == "turns":
                return  # a stale prompt: a newer YourTurn is on its way
            raise MatchFailed from error
        stats.acknowledged(started, due)


def ends(message: spb.StreamEventsResponse | spb.PlayResponse) -> bool:
    """Whether a seat's stream message carries MatchEnded (in ``event`` or, batched, in
    ``more_events``)."""
    if not message.HasField("event"):
        return False
    return message.event.HasField("match_ended") or any(
        event.HasField("match_ended") for event in message.more_events
    )


def action_in(event: pb.Event) -> tuple[int, int]:
    """The ``(seat, action)`` of the event that opens a batch; anything else is a divergence."""
    kind = event.WhichOneof("kind")
    if kind == "card_played":
        return event.card_played.seat, card_from_pb(event.card_played.card)
    if kind == "passed":
        return event.passed.seat, PASS
    if kind == "suit_excluded":
        return event.suit_excluded.seat, EXCLUDE + event.suit_excluded.suit - 1
    if kind == "trump_chosen":
        return event.trump_chosen.seat, CHOOSE_TRUMP + event.trump_chosen.suit - 1
    raise Divergence(f"event {event.seq} ({kind}) where the replica expects an action")
