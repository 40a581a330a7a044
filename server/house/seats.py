"""This server's house seats: asked for, seated, handed to the workers, given up, and the
practice match nobody attends any more ended.

Why the server seats its own bots: a match against bots that run in a player's page stops
when the page closes, and the server then plays every seat by its clock for hours. House
seats are played by the server's worker processes (:mod:`.workers`) from the moment the
match is created to its end, whoever watches. They are a practice room, bounded three ways:
the operator turns them on and caps the seats played at once (``serve --house-bots N``),
every match keeps at least one seat for a player, and a match whose players have all gone
(no stream open on any of their seats for ``serve --house-idle`` seconds) is cancelled with
a reason in its log, rather than left to its clock.

Nothing here is kept in the store: a seat is the house's when its token is the one its
name derives from the match's secret seed (:mod:`.spec`), so after a restart (or a replica's
take-over) the house seats of every unfinished match are found again from the matches alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import structlog

from cardarena.v1 import service_pb2 as spb

from ..errors import HouseFull
from ..hosting import Arena, HostedMatch
from ..hosting.completion import cancel_and_wait
from .spec import HouseBot, bot_of_name, house_seat_of, house_seats, offer
from .workers import Key, Worker, Workers

log = structlog.get_logger(__name__)

IDLE_SECONDS: Final = 300.0
"""A match with house seats is cancelled once none of its other seats has had a stream open
for this long (``serve --house-idle``)."""
MAX_SEATS: Final = 1000
"""The most house seats an operator may allow at once (``serve --house-bots``)."""
MAX_WORKERS: Final = 64
SWEEP_SECONDS: Final = 1.0
"""How often the house looks at its matches (attendance, ends, seats to hand out)."""
RETRY_SECONDS: Final = 5.0
"""How long a seat whose worker could not go on waits before it is handed out again."""
ADOPT_SECONDS: Final = 30.0
"""As a replica, how often to look for matches taken over from another (their house seats
are this replica's to play now)."""


@dataclass(frozen=True)
class HouseSettings:
    """What the operator allows: ``seats`` at once (0: no house bots), played by ``workers``
    processes; a match unattended ``idle_seconds`` is cancelled."""

    seats: int = 0
    workers: int = 1
    idle_seconds: float = IDLE_SECONDS


@dataclass
class HouseMatch:
    """A match with house seats, as the house follows it."""

    hosted: HostedMatch
    bots: dict[int, HouseBot]
    attended: float
    """When a stream of one of its other seats was last seen open (monotonic seconds)."""
    retry_at: dict[int, float] = field(default_factory=dict)


class Plan:
    """The house seats one CreateMatch asks for, checked before the match is created and
    seated once it is."""

    def __init__(self, house: HouseBots, bots: dict[int, HouseBot]) -> None:
        self.house = house
        self.bots = bots

    async def seat(self, hosted: HostedMatch) -> None:
        """Join every house seat (as a join of the seat's own would, logged as SeatJoined)
        and hand them to the workers; :class:`HouseFull` if the house filled up meanwhile
        (the match just created is then cancelled). A retried request finds its seats taken
        by these same tokens, and so seated."""
        if not self.bots:
            return
        house = self.house
        ours = hosted.match_id not in house.matches
        if ours:
            if house.count + len(self.bots) > house.settings.seats:
                with contextlib.suppress(Exception):  # it ended, or moved: nothing to undo
                    await hosted.cancel("house bots: every house seat is taken")
                raise house.full(len(self.bots))
            house.matches[hosted.match_id] = HouseMatch(
                hosted, dict(self.bots), house.now(), dict.fromkeys(self.bots, math.inf)
            )  # counted from now, handed out once joined
        try:
            for seat, bot in sorted(self.bots.items()):
                token = bot.token(hosted.record.seed, hosted.match_id, seat)
                await hosted.join(seat, bot.name, token)
        except BaseException:
            if ours:
                house.release(hosted.match_id)
            raise
        if ours:
            house.matches[hosted.match_id].retry_at.clear()
        log.info("house_seats_taken", match_id=hosted.match_id, seats=sorted(self.bots))
        house.hand_out()


class HouseBots:
    """Every house seat of this server's matches, and the workers that play them."""

    def __init__(self, arena: Arena, settings: HouseSettings | None = None) -> None:
        self.arena = arena
        self.settings = settings or HouseSettings()
        self.matches: dict[str, HouseMatch] = {}
        self.placed: dict[Key, Worker] = {}
        """Each house seat a worker plays now."""
        workers = max(1, min(self.settings.workers, self.settings.seats or 1))
        self.workers = Workers(workers, math.ceil(self.settings.seats / workers), self)
        self._sweeper: asyncio.Task[None] | None = None
        self.now = time.monotonic

    @property
    def on(self) -> bool:
        return self.settings.seats > 0

    @property
    def count(self) -> int:
        """House seats of unfinished matches: what ``--house-bots`` bounds."""
        return sum(len(match.bots) for match in self.matches.values())

    def offer(self) -> spb.HouseBots | None:
        """What ListGames tells clients (``None``: no house bots here)."""
        idle = self.settings.idle_seconds if self.arena.owner is None else 0.0  # see look()
        return offer(self.settings.seats, idle) if self.on else None

    def full(self, asked: int) -> HouseFull:
        free = max(0, self.settings.seats - self.count)
        return HouseFull(
            f"house_seats: this server plays at most {self.settings.seats} house seats at once,"
            f" {free} free now and {asked} asked: try again once a match with house bots ends"
        )

    def planned(self, request: spb.CreateMatchRequest, reserved: Sequence[int]) -> Plan:
        """The house seats ``request`` asks for, checked, while the house has room for them."""
        bots = house_seats(request, reserved, offered=self.on)
        if bots and self.count + len(bots) > self.settings.seats:
            raise self.full(len(bots))
        return Plan(self, bots)

    # -- life ----------------------------------------------------------------------------

    async def start(self, address: str) -> None:
        """Start the workers (reaching this server at ``address``), take up the house seats
        of the matches resumed, and look after them from now on."""
        if not self.on:
            return
        await self.workers.start(address)
        self.adopt()
        self._sweeper = asyncio.create_task(self._sweep())

    async def shutdown(self) -> None:
        """Stop looking after the seats and stop the workers (a drain: the matches resume
        wherever the server runs next)."""
        await cancel_and_wait(self._sweeper)
        self._sweeper = None
        await self.workers.stop()
        self.placed.clear()

    def adopt(self) -> int:
        """Follow every unfinished match this process writes whose house seats it does not
        follow yet (after a restart, all of them; as a replica, those taken over)."""
        found = 0
        for hosted in list(self.arena.matches.values()):
            if hosted.ended or not hosted.owned or hosted.match_id in self.matches:
                continue
            if not any(bot_of_name(seat.name) for seat in hosted.seats):
                continue
            bots = {}
            for seat in range(len(hosted.seats)):
                bot = house_seat_of(hosted, seat)
                if bot is not None:
                    bots[seat] = bot
            if bots:
                self.matches[hosted.match_id] = HouseMatch(hosted, bots, self.now())
                found += len(bots)
        if found:
            log.info("house_seats_resumed", seats=found, matches=len(self.matches))
            self.hand_out()
        return found

    def match_changed(self, hosted: HostedMatch) -> None:
        """A match changed status: an ended one's house seats are free again."""
        if hosted.ended and hosted.match_id in self.matches:
            self.release(hosted.match_id)

    def release(self, match_id: str) -> None:
        """Give up a match's house seats (it ended, or another replica writes it now)."""
        match = self.matches.pop(match_id, None)
        if match is None:
            return
        for seat in match.bots:
            key = (match_id, seat)
            self.placed.pop(key, None)
            self.workers.leave(key)

    # -- the workers' calls (:class:`.workers.Calls`) -------------------------------------

    def ready(self) -> None:
        self.hand_out()

    def done(self, key: Key, error: str | None) -> None:
        self.placed.pop(key, None)
        match = self.matches.get(key[0])
        if match is None or match.hosted.ended:
            return
        # Its worker stopped short of the end: hand the seat out again after a pause.
        log.warning("house_seat_stopped", match_id=key[0], seat=key[1], error=error)
        match.retry_at[key[1]] = self.now() + RETRY_SECONDS

    def lost(self, keys: set[Key]) -> None:
        for key in keys:
            self.placed.pop(key, None)
        self.hand_out()  # to the other workers, where there is room; the rest once it is back

    # -- looking after them --------------------------------------------------------------

    def hand_out(self) -> None:
        """Give each house seat no worker plays to the least busy worker with room."""
        now = self.now()
        for match_id, match in self.matches.items():
            if match.hosted.ended:
                continue
            for seat, bot in match.bots.items():
                key = (match_id, seat)
                if key in self.placed or match.retry_at.get(seat, 0.0) > now:
                    continue
                token = bot.token(match.hosted.record.seed, match_id, seat)
                worker = self.workers.place(key, bot.order(match_id, seat, token))
                if worker is None:
                    return  # no room anywhere: the next sweep tries again
                self.placed[key] = worker

    async def _sweep(self) -> None:
        period = max(0.05, min(SWEEP_SECONDS, self.settings.idle_seconds / 4))
        adopted = self.now()
        while True:
            await asyncio.sleep(period)
            try:
                await self.look()
                if self.arena.owner is not None and self.now() - adopted >= ADOPT_SECONDS:
                    adopted = self.now()
                    self.adopt()
            except Exception:  # one bad sweep must not end the house's care of its seats
                log.exception("house_sweep_failed")

    async def look(self) -> None:
        """One sweep: let go of the matches ended or written elsewhere, note who attends,
        cancel a match nobody has attended for the idle bound, hand out seats.

        A player's stream is seen only by the process that serves it; one of several
        replicas serves streams of matches others write, so there the idle bound does not
        apply (a match with a clock still ends by its rules)."""
        now = self.now()
        idle = self.settings.idle_seconds
        for match_id, match in list(self.matches.items()):
            hosted = self.arena.matches.get(match_id)
            if hosted is None or hosted.ended or not hosted.owned:
                self.release(match_id)
                continue
            match.hosted = hosted
            players = {s.seat for s in hosted.readers.subscribers} - set(match.bots) - {None}
            if players or self.arena.owner is not None:  # see below
                match.attended = now
            elif now - match.attended >= idle:
                await self._cancel_unattended(match)
        self.hand_out()

    async def _cancel_unattended(self, match: HouseMatch) -> None:
        idle = self.settings.idle_seconds
        hosted = match.hosted
        reason = f"no player attended for {idle:g} s: a practice match with house bots ends"
        try:
            await hosted.cancel(reason)
        except Exception as error:  # it ended or moved meanwhile; else the next sweep retries
            log.info("house_idle_cancel_skipped", match_id=hosted.match_id, error=str(error))
            return
        log.info("house_match_unattended", match_id=hosted.match_id, idle_seconds=idle)
        self.release(hosted.match_id)
