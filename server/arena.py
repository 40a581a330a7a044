"""The arena: every hosted match, created, found, loaded back after a restart."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from cardarena.engine import commitment
from cardarena.engine.match import setup
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb

from .hosting import HostedMatch, PbProjector, Seat, new_match_id, rebuild_engine
from .store import EventStore, MatchRecord

log = structlog.get_logger(__name__)

MAX_MOVE_MS = 3_600_000


class UnknownMatch(KeyError):
    def __init__(self, match_id: str) -> None:
        super().__init__(match_id)
        self.match_id = match_id

    def __str__(self) -> str:
        return f"no match {self.match_id!r}"


class Arena:
    """Owns the hosted matches of one server process and the store behind them."""

    def __init__(
        self, store: EventStore, *, on_change: Callable[[HostedMatch], None] | None = None
    ) -> None:
        self.store = store
        self.matches: dict[str, HostedMatch] = {}
        self._on_change = on_change or (lambda hosted: None)

    async def create(
        self,
        game: str,
        players: int | None,
        options: Mapping[str, Any] | None,
        *,
        move_ms: int = 0,
        seed: bytes | None = None,
    ) -> HostedMatch:
        """Validate, persist the match and its first events, and host it. Raises ``OptionError``."""
        if not 0 <= move_ms <= MAX_MOVE_MS:
            raise ValueError(f"time_control.move_ms must be 0..{MAX_MOVE_MS}, got {move_ms}")
        prepared = setup(game, players=players, options=options)
        seed = seed if seed is not None else secrets.token_bytes(32)
        engine = prepared.start(seed)
        config = {
            "game": prepared.game,
            "players": prepared.players,
            "options": prepared.options,
            "move_ms": move_ms,
        }
        record = MatchRecord(
            match_id=new_match_id(),
            created_at=_now_iso(),
            game=prepared.game,
            players=prepared.players,
            config=json.dumps(config, sort_keys=True).encode(),
            seed=seed,
            commitment=commitment(seed),
            status="running",
            ended_at=None,
        )
        await self.store.create_match(record)
        hosted = self._host(
            record, engine, [Seat() for _ in range(prepared.players)], 0, voluntary_pass=False
        )
        await self._write_opening(hosted)
        log.info(
            "match_created", match_id=record.match_id, game=record.game, players=record.players
        )
        return hosted

    async def _write_opening(self, hosted: HostedMatch) -> None:
        events = hosted.engine.log
        encoded = [codec.event_to_pb(e, i + 1, hosted.match_id) for i, e in enumerate(events)]
        async with hosted.lock:
            await hosted._persist(encoded, request_id=None, seat=None)

    def _host(
        self,
        record: MatchRecord,
        engine: Any,
        seats: list[Seat],
        last_seq: int,
        *,
        voluntary_pass: bool,
    ) -> HostedMatch:
        config = json.loads(record.config)
        hosted = HostedMatch(
            record,
            engine,
            seats,
            last_seq,
            self.store,
            move_ms=int(config.get("move_ms", 0)),
            voluntary_pass=voluntary_pass,
            on_change=self._on_change,
        )
        self.matches[record.match_id] = hosted
        return hosted

    async def get(self, match_id: str) -> HostedMatch:
        """The hosted match, loading it from the store if this process has not seen it."""
        hosted = self.matches.get(match_id)
        if hosted is not None:
            return hosted
        record = await self.store.get_match(match_id)
        if record is None:
            raise UnknownMatch(match_id)
        return await self._load(record)

    async def _load(self, record: MatchRecord) -> HostedMatch:
        stored = await self.store.read_events(record.match_id)
        engine = rebuild_engine(record, stored)
        seats = [Seat() for _ in range(record.players)]
        for seat in await self.store.get_seats(record.match_id):
            seats[seat.seat] = Seat(seat.token_hash, seat.name)
        tracker = PbProjector()
        for item in stored:
            tracker.track(pb.Event.FromString(item.payload))
        hosted = self.matches.get(record.match_id)
        if hosted is not None:  # loaded concurrently
            return hosted
        last_seq = stored[-1].seq if stored else 0
        hosted = self._host(record, engine, seats, last_seq, voluntary_pass=tracker.voluntary_pass)
        hosted.resumed = True
        hosted.last_hash = stored[-1].hash if stored else b""
        if not stored:
            await self._write_opening(hosted)
        return hosted

    async def resume_unfinished(self) -> int:
        """Reload every unfinished match from its log and restart its clock."""
        count = 0
        for record in await self.store.unfinished_matches():
            if record.match_id in self.matches:
                continue
            hosted = await self._load(record)
            hosted._rearm_clock()
            count += 1
        log.info("matches_resumed", count=count)
        return count

    async def shutdown(self) -> None:
        for hosted in self.matches.values():
            hosted.stop_clock()
            await hosted.close_streams()


def _now_iso() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
