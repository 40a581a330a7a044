"""The arena: every hosted match, created, found, loaded back after a restart.

Whether it is alone (SQLite: it owns every match) or one of several replicas sharing a
PostgreSQL store (it owns the matches whose lease it holds and follows the others) is its
:mod:`.replication` policy's business: the arena asks it who writes a match, what a match
loaded from the store becomes, and what starting and stopping mean.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from cardarena.engine import commitment
from cardarena.engine.match import setup
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import MAX_CLOCK_MS, TimeControl

from ..errors import BadRequest, RequestReused, Unreplayable
from ..store import EventStore, MatchLog, MatchRecord, Owner, StoreConflict, UnknownMatch, now_iso
from .clock import WALL_TIME, Reconnection
from .completion import cancel_and_wait, to_completion
from .credentials import is_secret, new_match_id, secret_hash, token_hash
from .faults import SeatFaults
from .match import HostedMatch
from .outcome import Outcome, stored_outcome, stored_outcomes
from .rebuild import rebuild
from .replication import Replicas, Replication
from .seating import Seat
from .signing import Signer, log_checkpoint, public_keys

log = structlog.get_logger(__name__)

MAX_MOVE_MS = MAX_CLOCK_MS
MAX_ENDED_IN_MEMORY = 1000
"""Ended matches kept in memory beyond this are dropped, oldest first (and reloaded from the
store if asked for): a long competition would otherwise grow without bound."""


WAITING_EXPIRY_SECONDS = 3600.0
"""A match whose seats are still free this long after its creation is cancelled."""
IDLE_EXPIRY_SECONDS = 3600.0
"""A running match without a clock that has gone this long without a write is cancelled."""
STATUSES = ("waiting", "running", "ended")


def match_id_for(request_id: str) -> str:
    """The match id a create request id stands for (same length as a drawn one)."""
    return hashlib.sha256(b"cardarena-create-v1:" + request_id.encode()).hexdigest()[:16]


class Arena:
    """Owns the hosted matches of one server process and the store behind them."""

    noun = "match"
    """What it holds, as a refusal names it."""

    def __init__(
        self,
        store: EventStore,
        *,
        owner: Owner | None = None,
        on_change: Callable[[HostedMatch], None] | None = None,
    ) -> None:
        self.store = store
        self.replication = Replication(self) if owner is None else Replicas(self, owner)
        """Alone, or one replica of several (:mod:`.replication`)."""
        self.matches: dict[str, HostedMatch] = {}
        self._report = on_change or (lambda hosted: None)
        self.ended: dict[str, None] = {}
        """Ended matches still in memory, oldest first (a dict as an ordered set)."""
        self._sweeper: asyncio.Task[None] | None = None
        self.counts = dict.fromkeys(STATUSES, 0)
        """Hosted matches by status, kept as they change (never recounted)."""
        self.seated: dict[bytes, int] = {}
        """The token hashes of the seats of running matches (how many seats each holds): a
        call that carries one proves it is a player here before it names its match."""
        self._seated_of: dict[str, tuple[bytes, ...]] = {}
        self.reconnection = Reconnection()
        """The window after an outage in which seats not yet back are not timed: opened when
        this arena resumes matches (or its tournaments resume), shared by every match."""
        self.signer: Signer | None = None
        """The key that signs each match's checkpoint when it ends (``None``: unsigned)."""
        self._counted: dict[str, str] = {}

    async def create(
        self,
        game: str,
        players: int | None,
        options: Mapping[str, Any] | None,
        *,
        move_ms: int = 0,
        control: TimeControl | None = None,
        seed: bytes | None = None,
        request_id: str | None = None,
        reserved: Mapping[int, str] | None = None,
        creator_secret: str | None = None,
        forfeit_after: int = 0,
        tournament_id: str = "",
        seed_shared: bool = False,
    ) -> HostedMatch:
        """Validate, persist the match and its first events, and host it. Raises ``OptionError``.

        ``reserved`` maps seats to the join secrets that alone may take them; whoever holds
        ``creator_secret`` may cancel the match. Both are kept only as hashes. With a
        ``request_id`` the match id is derived from it, so a retried request finds the match
        its first attempt created (:class:`RequestReused` if the retry asks for something
        else). A tournament's matches name it, and carry its fault policy (``forfeit_after``
        faults forfeit a seat; see :mod:`.faults`); a match whose ``seed_shared`` with others
        keeps it until its tournament reveals it (:mod:`.ending`). Its clock is ``control``,
        or, for the common case, ``move_ms`` per move alone."""
        settings = {
            "forfeit_after": forfeit_after,
            "tournament": tournament_id,
            "seed_shared": seed_shared,
        }
        return await to_completion(
            self._create(
                game,
                players,
                options,
                control or TimeControl(move_ms=move_ms),
                seed,
                request_id,
                reserved or {},
                creator_secret,
                {k: v for k, v in settings.items() if v},
            )
        )

    async def _create(
        self,
        game: str,
        players: int | None,
        options: Mapping[str, Any] | None,
        control: TimeControl,
        seed: bytes | None,
        request_id: str | None,
        reserved: Mapping[int, str],
        creator_secret: str | None,
        settings: Mapping[str, Any],
    ) -> HostedMatch:
        try:
            control.check()
        except ValueError as error:
            raise BadRequest(str(error)) from None
        prepared = setup(game, players=players, options=options)
        for seat in reserved:
            if not 0 <= seat < prepared.players:
                raise BadRequest(
                    f"reserved_seats: seat {seat} does not exist (0..{prepared.players - 1})"
                )
        chosen_seed = seed
        seed = seed if seed is not None else secrets.token_bytes(32)
        engine = prepared.start(seed, dealing=False)  # the first deal waits for every seat
        config: dict[str, Any] = {
            "game": prepared.game,
            "players": prepared.players,
            "options": prepared.options,
            **control.settings(),
            **settings,  # only when given, so that older matches' settings compare equal
        }
        if reserved:  # only when given, so that older matches' settings compare equal
            config["reserved"] = {str(s): secret_hash(x).hex() for s, x in sorted(reserved.items())}
        if creator_secret:
            config["creator"] = secret_hash(creator_secret).hex()
        if chosen_seed is not None:  # a retry must ask for the same seed, too
            config["seed"] = commitment(chosen_seed)
        match_id = new_match_id() if request_id is None else match_id_for(request_id)
        record = MatchRecord(
            match_id=match_id,
            created_at=now_iso(),
            game=prepared.game,
            players=prepared.players,
            config=json.dumps(config, sort_keys=True).encode(),
            seed=seed,
            commitment=commitment(seed),
            status="running",
            ended_at=None,
        )
        try:
            fence = await self.store.create_match(record, self.owner)
        except StoreConflict:
            if request_id is None:
                raise
            existing = await self.get(match_id)
            if json.loads(existing.record.config) != config:
                raise RequestReused(request_id, "to create a match with other settings") from None
            return existing
        hosted = self._host(
            record, engine, [Seat() for _ in range(prepared.players)], 0, voluntary_pass=False
        )
        hosted.fence = fence
        await self.write_opening(hosted)
        log.info(
            "match_created", match_id=record.match_id, game=record.game, players=record.players
        )
        return hosted

    async def write_opening(self, hosted: HostedMatch) -> None:
        """Persist a match's opening events (see :meth:`HostedMatch.write_opening`)."""
        async with hosted.lock:
            await hosted.write_opening()

    def _host(
        self,
        record: MatchRecord,
        engine: Any,
        seats: list[Seat],
        last_seq: int,
        *,
        voluntary_pass: bool,
        cancelled: bool = False,
    ) -> HostedMatch:
        config = json.loads(record.config)
        for seat, digest in config.get("reserved", {}).items():
            seats[int(seat)].reserved = bytes.fromhex(digest)
        hosted = HostedMatch(
            record,
            engine,
            seats,
            last_seq,
            self.store,
            control=TimeControl.from_settings(config),
            voluntary_pass=voluntary_pass,
            on_change=self._changed,
            faults=SeatFaults(
                record.players,
                forfeit_after=int(config.get("forfeit_after", 0)),
                logged=bool(config.get("tournament")),
            ),
            tournament_id=str(config.get("tournament", "")),
            seed_shared=bool(config.get("seed_shared")),
            reconnection=self.reconnection,
        )
        hosted.await_seats()  # begun inside an outage's window: its seats may still be away
        hosted.cancelled = cancelled
        hosted.signer = self.signer
        self.matches[record.match_id] = hosted
        hosted._reported_status = hosted.status
        self._changed(hosted)  # counted; an ended one counts towards the bound in memory
        return hosted

    def _changed(self, hosted: HostedMatch) -> None:
        """A hosted match changed status: report it, and keep few ended matches in memory
        (their logs are final and in the store; ``get`` loads one again on demand)."""
        self._count(hosted.match_id, hosted.status)
        self._index_seats(hosted)
        if hosted.ended:
            self.ended[hosted.match_id] = None
            for match_id in list(self.ended):
                if len(self.ended) <= MAX_ENDED_IN_MEMORY:
                    break
                old = self.matches.get(match_id)
                if old is not None and old.readers.subscribers:
                    continue  # someone is still reading it
                del self.ended[match_id]
                self.matches.pop(match_id, None)
                self._count(match_id, None)
        try:
            self._report(hosted)
        except Exception:  # the change is durable already: a report must not fail its write
            log.exception("change_report_failed", match_id=hosted.match_id)

    def _index_seats(self, hosted: HostedMatch) -> None:
        """Keep :attr:`seated` to the seats of running matches (every seat is taken then)."""
        indexed = self._seated_of.get(hosted.match_id)
        if hosted.status == "running" and indexed is None:
            hashes = tuple(s.token_hash for s in hosted.seats if s.token_hash is not None)
            self._seated_of[hosted.match_id] = hashes
            for digest in hashes:
                self.seated[digest] = self.seated.get(digest, 0) + 1
        elif hosted.status != "running" and indexed is not None:
            del self._seated_of[hosted.match_id]
            for digest in indexed:
                left = self.seated[digest] - 1
                if left:
                    self.seated[digest] = left
                else:
                    del self.seated[digest]

    def holds_seat(self, token: str | None) -> bool:
        """Whether ``token`` is a seat's of a running match here (it proves who calls)."""
        return token is not None and token_hash(token) in self.seated

    async def holds_stored_seat(self, match_id: str, seat: int, token: str | None) -> bool:
        """Whether ``token`` is ``seat``'s of ``match_id`` as the store keeps it (constant
        time): proof enough to load a match this process does not hold, for its own player."""
        if not token:
            return False
        digest = token_hash(token)
        return any(
            stored.seat == seat and hmac.compare_digest(stored.token_hash, digest)
            for stored in await self.store.get_seats(match_id)
        )

    def _count(self, match_id: str, status: str | None) -> None:
        """Move one match between the status counts (``None``: no longer hosted): O(1), so
        a status change costs the same with 20 matches hosted or 20,000."""
        before = self._counted.pop(match_id, None)
        if before is not None:
            self.counts[before] -= 1
        if status is not None:
            self._counted[match_id] = status
            self.counts[status] += 1

    async def get(self, match_id: str) -> HostedMatch:
        """The hosted match, loading it from the store if this process has not seen it. A
        followed match is brought up to date first, so a reader sees at least what any
        replica has acknowledged before the call."""
        hosted = self.matches.get(match_id)
        if hosted is None:
            record = await self.store.get_match(match_id)
            if record is None:
                raise UnknownMatch(match_id)
            return await self._load(record)
        if not hosted.owned:
            await hosted.catch_up()
        return hosted

    @property
    def owner(self) -> Owner | None:
        """This process as a lease holder; ``None`` alone."""
        return self.replication.owner

    def replicate_as(self, owner: Owner) -> None:
        """Host as one replica of several from now on (before :meth:`resume_unfinished`: a
        replica learns the address others forward to only once it listens)."""
        self.replication = Replicas(self, owner)

    async def writer_of(self, match_id: str) -> HostedMatch | str:
        """Where an action on ``match_id`` must go: the hosted match if this process writes
        it, else the address of the replica that does."""
        return await self.replication.writer_of(match_id)

    async def _load(self, record: MatchRecord, read: MatchLog | None = None) -> HostedMatch:
        stored = read.events if read else await self.store.read_events(record.match_id)
        try:
            entries = [pb.Event.FromString(item.payload) for item in stored]  # decoded once
            engine, joins = rebuild(record, entries)
        except Exception as error:  # whatever the bytes make the decoder or the engine say
            raise Unreplayable(record.match_id, error) from error
        seats = [Seat() for _ in range(record.players)]
        for seat in read.seats if read else await self.store.get_seats(record.match_id):
            seats[seat.seat] = Seat(seat.token_hash, seat.name)
        cancelled = any(e.WhichOneof("kind") == "match_cancelled" for e in entries)
        requests = read.requests if read else await self.store.request_results(record.match_id)
        hosted = self.matches.get(record.match_id)
        if hosted is not None:  # loaded concurrently
            return hosted
        last_seq = stored[-1].seq if stored else 0
        hosted = self._host(
            record,
            engine,
            seats,
            last_seq,
            voluntary_pass=False,
            cancelled=cancelled,
        )
        hosted.joins = joins
        for entry in entries:
            hosted.readers.note(entry)
        hosted._fold_log(entries)
        hosted.requests.learn(requests)
        hosted.last_hash = stored[-1].hash if stored else b""
        await self.replication.loaded(hosted, empty=not stored)
        return hosted

    # -- what the store holds, for readers (the api reads it here, never in the store) ----

    async def list_records(
        self,
        *,
        status: str | None,
        game: str | None,
        page_size: int,
        page_token: str | None,
        newest_first: bool = False,
    ) -> tuple[list[MatchRecord], str | None]:
        """One page of stored matches (see :meth:`EventStore.list_matches`)."""
        return await self.store.list_matches(
            status=status,
            game=game,
            page_size=page_size,
            page_token=page_token,
            newest_first=newest_first,
        )

    async def stored_outcome(self, record: MatchRecord) -> Outcome:
        """What a stored match's log says it produced (its kept row, or one read of its log;
        no replay)."""
        return await stored_outcome(self.store, record)

    async def stored_outcomes(self, records: list[MatchRecord]) -> dict[str, Outcome]:
        """:meth:`stored_outcome` of each, their kept rows read a batch at a time."""
        return await stored_outcomes(self.store, records)

    async def stored_seat_names(self, match_ids: list[str]) -> dict[str, dict[int, str]]:
        """The taken seats of stored matches and their names, in one read, hosting none."""
        seats = await self.store.seats_of(match_ids)
        return {match_id: {s.seat: s.name for s in taken} for match_id, taken in seats.items()}

    async def log_checkpoint(self, match_id: str) -> spb.Checkpoint | None:
        """The signed checkpoint of an ended match's final log (see :mod:`.signing`)."""
        return await log_checkpoint(self.store, self.signer, match_id)

    async def public_keys(self) -> list[spb.PublicKey]:
        """Every key this server has signed with, the current one first."""
        return await public_keys(self.store, self.signer)

    def may_cancel(self, hosted: HostedMatch, secret: str) -> bool:
        """Whether ``secret`` is the creator secret of ``hosted`` (constant time)."""
        return is_secret(json.loads(hosted.record.config).get("creator"), secret)

    def expire_after(self, waiting: float, idle: float) -> None:
        """Cancel, a few times per period, the matches still waiting for seats ``waiting``
        seconds after their creation, and the running matches without a clock that have gone
        ``idle`` seconds without a write (0: never, either). Matches loaded after a restart
        are included; the idle ones count from their loading.

        Why the idle: nothing else ends an untimed match its players left (a timed one moves
        on by its clock), and such a match would hold its memory, its row and its creator's
        place in the anonymous budget (:mod:`cardarena.server.api.anonymous`) for ever. A
        cancel charges nobody: it has no result."""
        if (waiting > 0 or idle > 0) and self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep(waiting, idle))

    async def _sweep(self, waiting: float, idle: float) -> None:
        period = min(max(min(s for s in (waiting, idle) if s > 0) / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(period)
            now, clock = time.time(), time.monotonic()
            for hosted in list(self.matches.values()):
                if not hosted.owned:
                    continue
                if hosted.status == "waiting":
                    if not waiting or now - _unix(hosted.record.created_at) < waiting:
                        continue
                    reason = f"expired: seats still free after {waiting:g} s"
                elif hosted.status == "running" and not hosted.control.timed:
                    if not idle or clock - hosted.last_written < idle:
                        continue
                    reason = f"expired: no move for {idle:g} s"
                else:
                    continue
                try:
                    await hosted.cancel(reason)
                except Exception as error:  # it started, moved or ended meanwhile: fine
                    log.info("expiry_skipped", match_id=hosted.match_id, error=str(error))

    async def resume_unfinished(self) -> int:
        """Start hosting what the store holds, as the replication policy says: alone, every
        unfinished match (:meth:`load_unfinished`); as a replica, the orphans it takes over."""
        return await self.replication.start()

    async def load_unfinished(self) -> int:
        """Reload every unfinished match from its log, a page of logs at a time (three reads a
        page, not three per match; one page held at once), then restart their clocks, all at
        once at the end: a match loaded first must not spend its seat's move while the
        thousands after it load, before anyone can reach the server; and each seat's turns
        wait out the reconnection window until it is back (:class:`.clock.Reconnection`). A log that does not
        replay costs its match alone (:class:`Unreplayable`, logged): the others resume and
        the server starts."""
        loaded: list[HostedMatch] = []
        failed = 0
        async for page in self.store.unfinished_log_batches():
            for read in page:
                if read.record.match_id in self.matches:
                    continue
                try:
                    loaded.append(await self._load(read.record, read))
                except Unreplayable as error:
                    log.error("resume_failed", match_id=error.match_id, error=error.error_type)
                    failed += 1
        if loaded:  # the server was down: nobody could play, nobody is charged for it
            self.reconnection.open(WALL_TIME.now())
        for hosted in loaded:
            hosted.await_seats()
            hosted._rearm_clock()
        log.info("matches_resumed", count=len(loaded), failed=failed)
        return len(loaded)

    async def shutdown(self) -> None:
        """Stop clocks, hand over what the replication policy holds, close streams."""
        await cancel_and_wait(self._sweeper)
        self._sweeper = None
        for hosted in self.matches.values():
            hosted.clock.stop()
        await self.replication.stop()
        for hosted in self.matches.values():
            hosted.readers.close()


def _unix(iso: str) -> float:
    """Seconds since the epoch of a stored ``created_at``."""
    return datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
