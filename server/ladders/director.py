"""One ladder's director: it makes duplicate groups among the entrants connected now, starts
their matches as the entrants have room, folds every ended match into the board in index
order, and reveals each group's seed once its last match has ended.

Why it survives ``kill -9``: every group's lineup is written before any of its matches is made
(``ladder_groups``), and every match's id, seed and seat credentials derive from the ladder's
secret and the match's index, so a restart walks the groups, finds each match it had made
(ended, running, or not made yet) and carries on. A match whose entrant is away when its turn
to start comes is *voided* if its group has not begun (made and cancelled at once, so that it
is in the log as counted for nothing, and nobody is faulted for being away), but a group read
back after a restart waits through the reconnection window first (``_coming_back``); once any
rotation of the group has started, the rest start anyway (:func:`begun`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from cardarena.competition import Candidate, Played, group_seed, next_lineup, rotations
from cardarena.competition.ladder import Board
from cardarena.v1 import codec
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.signed import chain_match, first_matches_digest

from ..errors import BadRequest, NotRunning, Throttled
from ..hosting import Arena, HostedMatch
from ..hosting.arena import match_id_for
from ..hosting.clock import WALL_TIME
from ..hosting.outcome import Outcome, stored_outcomes
from ..store import ENDED, LadderRecord, StoreConflict, now_iso
from ..tournaments.entrants import Link, Links, derive
from ..tournaments.reveals import reveal_at_writer
from ..tournaments.seating import Join, seat_all
from .info import ladder_info
from .spec import LadderSpec, player_name

log = structlog.get_logger(__name__)

WAITING, RUNNING, DONE = "waiting", "running", "done"
RETRY_SECONDS = (0.1, 0.5, 2.0, 5.0)
"""Pauses between attempts after a failure (the store away, say)."""
MAX_VERSIONS = 100
"""Versions one entrant may enter with: each is a player of its own on the board."""
RECOVER_GROUPS = 200
"""Groups whose rows one read of a restart asks for."""
PRIOR_ORDINAL = 0.0
"""A new player's conservative rating (OpenSkill's prior: 25 - 3 x 25/3)."""


@dataclass
class Group:
    """A duplicate group not finished yet: its lineup, and where each rotation stands."""

    number: int
    lineup: tuple[str, ...]
    """The player at each seat of rotation 0."""
    entrants: tuple[int, ...]
    state: list[str]
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    """Index -> how each of its ended matches ended (until the group is revealed)."""


def begun(group: Group) -> bool:
    """Whether a rotation of ``group`` has started (running, or ended other than voided): its
    seats have seen the group's deals, so the rest of its rotations must be played.

    Why: the rotations of one seed even out its luck. An entrant that could leave once it had
    seen its hands, and so void the rotations that hand its good cards to the others, would
    keep a lucky result and lose an unlucky one. Once a group has begun, its rotations start
    whether or not their entrants are there; a seat nobody plays times out and is charged as
    any disconnect mid-match is (after a restart, the reconnection window first: the host's
    outage is never a seat's). A group that has not begun is voided, as before: nobody has
    seen anything, so leaving wins nothing."""
    return any(state == RUNNING for state in group.state) or any(
        not outcome.cancelled for outcome in group.outcomes.values()
    )


class LadderDirector:
    """Runs one ladder in this process."""

    def __init__(
        self,
        record: LadderRecord,
        spec: LadderSpec,
        arena: Arena,
        *,
        on_change: Callable[[LadderDirector], None],
    ) -> None:
        self.record, self.spec, self.arena = record, spec, arena
        self.ladder_id = record.ladder_id
        self.size = spec.players
        """Matches per group: one per rotation."""
        self.board = Board(lowest_wins=spec.lowest_wins, group_size=self.size)
        self.groups: dict[int, Group] = {}
        self.next_group = 0
        self.ended: dict[int, tuple[Played | None, lpb.LadderMatch]] = {}
        """Ended matches beyond the board's settled prefix (``None``: counted for nothing),
        each with its line in a snapshot."""
        self.digest = first_matches_digest()
        """The chained digest of the counted matches' lines (``LadderSnapshot``)."""
        self.match_ids: dict[int, str] = {}
        """Index -> match id, of the running matches."""
        self.by_match: dict[str, int] = {}
        """Match id -> index, of the running matches."""
        self.group_of_match: dict[str, int] = {}
        """Match id -> its group, of every match of the groups not finished yet (what the
        embargo asks of a match it holds back), whether made yet or not."""
        self.busy: Counter[int] = Counter()
        """Entrant -> its running matches."""
        self.scheduled: Counter[str] = Counter()
        """Player -> matches scheduled for it (every group it was put in, in full)."""
        self.resumed: set[int] = set()
        """The groups read back when this process took the ladder up (:meth:`_recover`)."""
        self.resumed_until = 0.0
        """Unix seconds: the reconnection window as it stood then (``_coming_back``)."""
        self.met: Counter[frozenset[str]] = Counter()
        """Pairs of players -> the groups they shared."""
        n = len(spec.entrants)
        self.links: Links[lpb.EnterLadderResponse] = Links(n)
        self.capacity = [1] * n
        self.versions = [""] * n
        self.last_seen = [0.0] * n
        self.players: dict[str, int] = {}
        """Every player the ladder has scheduled or seen enter -> its entrant."""
        self.current: dict[int, str] = {}
        """Entrant -> the player it is now (its latest version)."""
        self.closed = record.status != "running"
        self.moved = False
        self.stopping = False
        """Set by :meth:`stop`: the scheduling loop ends even if a cancel is lost."""
        """On replicas: another replica took the ladder over, and this director stopped."""
        self.version = 0
        self._on_change = on_change
        self._wake = asyncio.Event()
        self._filling = asyncio.Lock()
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        """Set once the groups of a previous process are read back."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.log = log.bind(ladder_id=self.ladder_id)
        self._seed = hashlib.sha256(b"cardarena-ladder-seed-v1" + record.secret).digest()

    # -- derived credentials ---------------------------------------------------------------

    def _derived(self, label: str) -> str:
        return derive(self.record.secret, label)

    def match_id(self, index: int) -> str:
        return match_id_for(self._derived(f"match/{index}"))

    def token(self, index: int, seat: int) -> str:
        return self._derived(f"token/{index}/{seat}")

    def seats(self, group: Group, index: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The players and the entrants at each seat of match ``index`` of ``group``."""
        rotation = index - group.number * self.size
        return rotations(group.lineup)[rotation], rotations(group.entrants)[rotation]

    def retired(self, player: str) -> bool:
        entrant = self.players.get(player)
        return entrant is not None and self.current.get(entrant, player) != player

    # -- running ---------------------------------------------------------------------------

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        """Recover, then schedule whenever something changes (and at least every
        ``RETRY_SECONDS[-1]``). A failure is the host's: logged, and tried again with
        backoff; a ladder never stops scheduling for good because the store blinked."""
        pause = RETRY_SECONDS[0]
        recovered = False
        while not self.stopping:
            try:
                if not recovered:
                    await self._recover()
                    recovered = True
                if self.closed:  # closed before a restart, or while recovering: void the rest
                    await self._void_waiting()
                    self._changed()  # final now, perhaps: kept as a row
                    return
                await self.fill()
                pause = RETRY_SECONDS[0]
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self.log.warning("ladder_director_retrying", error=str(error), exc_info=True)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_SECONDS[-1])
                continue
            self._wake.clear()
            # asyncio.timeout, not wait_for: 3.11's wait_for loses a cancel that comes as the
            # event is set (stop() then waited on a director that went on scheduling).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RETRY_SECONDS[-1]):
                    await self._wake.wait()

    async def _recover(self) -> None:
        """Walk the groups a previous process made, a batch at a time: ended matches fold
        into the board, running ones are followed, the rest wait for their entrants."""
        first = 0
        self.resumed_until = self.arena.reconnection.until  # opened as the ladder was taken up
        while True:
            batch = await self.arena.store.ladder_groups(self.ladder_id, first, RECOVER_GROUPS)
            if not batch:
                break
            for number, lineup in batch:
                await self._recover_group(number, tuple(lineup))
                self.resumed.add(number)
            first = batch[-1][0] + 1
        self._advance()
        self.ready.set()
        if self.next_group:
            self.log.info("ladder_resumed", groups=self.next_group, counted=self.board.counted)

    async def _recover_group(self, number: int, lineup: tuple[str, ...]) -> None:
        group = self._note_group(number, lineup)
        indices = range(number * self.size, (number + 1) * self.size)
        ids = [self.match_id(i) for i in indices]
        records = await self.arena.store.get_matches(ids)
        ended = [r for i, r in records.items() if r.status == ENDED and i not in self.arena.matches]
        outcomes = await stored_outcomes(self.arena.store, ended)
        made = {
            i: await self.arena.get(m)
            for i, m in zip(indices, ids, strict=True)
            if m in records and m not in outcomes
        }
        for index, match_id in zip(indices, ids, strict=True):
            if match_id in outcomes:
                self._collect(group, index, outcomes[match_id])
        # A match made but none of whose seats was taken is a void or a start cut short by
        # the stop: nobody was told of it, so nobody has seen its deals. In a group that has
        # not begun it is voided (seating it would begin the group, and its absent entrants'
        # rotations would be charged for the host's stop); in one that has, it is played.
        unseated = {i for i, h in made.items() if all(s.token_hash is None for s in h.seats)}
        if not begun(group) and len(unseated) == len(made):
            for index in sorted(unseated):
                del made[index]
                await self._void(group, index, "its ladder stopped before it was seated")
        for index, hosted in made.items():
            if hosted.status == "waiting":  # made, but stopped before every seat was taken
                with contextlib.suppress(NotRunning):
                    await self._seat(index, self.seats(group, index)[0], hosted.match_id)
            self._follow(group, index, hosted)
            if hosted.ended:
                self._collect(group, index, hosted.outcome())
        self._finish_group(group)

    def _note_group(self, number: int, lineup: tuple[str, ...]) -> Group:
        entrants = tuple(self.players.setdefault(p, self._entrant_of(p)) for p in lineup)
        for entrant, player in zip(entrants, lineup, strict=True):
            self.current[entrant] = player  # groups are made in order: the latest wins
        group = Group(number, lineup, entrants, [WAITING] * self.size)
        self.groups[number] = group
        for index in range(number * self.size, (number + 1) * self.size):
            self.group_of_match[self.match_id(index)] = number
        self.next_group = max(self.next_group, number + 1)
        for player in lineup:
            self.scheduled[player] += self.size
        for a in range(len(lineup)):
            for b in range(a + 1, len(lineup)):
                self.met[frozenset((lineup[a], lineup[b]))] += 1
        return group

    def _entrant_of(self, player: str) -> int:
        entrants = self.spec.entrants
        if player in entrants:
            return entrants.index(player)
        return entrants.index(player.rpartition("@")[0])

    async def fill(self) -> None:
        """Start what may start, void what cannot, and make new groups while there is room."""
        async with self._filling:
            while not self.closed:
                await self._start_waiting()
                if not await self._new_group():
                    return

    async def _start_waiting(self) -> None:
        now = WALL_TIME.now()  # one reading a round: a group waits or is voided as a whole
        for group in sorted(self.groups.values(), key=lambda g: g.number):
            for rotation, state in enumerate(group.state):
                if state != WAITING or self.closed:
                    continue
                index = group.number * self.size + rotation
                players, entrants = self.seats(group, index)
                away = [
                    p
                    for p, e in zip(players, entrants, strict=True)
                    if not self.links.connected(e) or self.current.get(e) != p
                ]
                if away and not begun(group):
                    if self._coming_back(group, players, entrants, now):
                        continue
                    await self._void(group, index, f"{', '.join(sorted(set(away)))} away")
                elif len(self.running_indices()) < self.spec.concurrency and all(
                    self.busy[e] < self.capacity[e] for e in set(entrants)
                ):
                    await self._start(group, index, players, entrants)

    def _coming_back(
        self, group: Group, players: tuple[str, ...], entrants: tuple[int, ...], now: float
    ) -> bool:
        """Whether a rotation of a group not begun should wait rather than be voided: the
        group was read back when this process took the ladder up (after a restart, or from a
        replica that stopped directing it), the reconnection window opened then is still
        open, and each of its players is away only for want of a connection, not because
        its entrant has entered since as another version.

        Why: right after a restart nobody is connected yet. Voiding then would lose every
        scheduled group to the host's stop, which is never the entrants' doing. The window
        is bounded (``serve --reconnect-grace``) and fixed when the ladder is taken up (a
        match taken over later does not extend it), and a group made since is not held by
        it: an entrant that leaves one is away at once. One not back when the window
        closes is away, and the group is voided at the next scheduling round, as before."""
        if group.number not in self.resumed or now >= self.resumed_until:
            return False
        return all(self.current.get(e) == p for p, e in zip(players, entrants, strict=True))

    def running_indices(self) -> list[int]:
        return list(self.match_ids)

    def _waiting(self) -> int:
        return sum(g.state.count(WAITING) for g in self.groups.values())

    async def _new_group(self) -> bool:
        """Make one new group if there is room and enough entrants may play; whether it did."""
        if len(self.match_ids) + self._waiting() >= self.spec.concurrency:
            return False
        pending = {e for g in self.groups.values() if WAITING in g.state for e in g.entrants}
        candidates = []
        for entrant, player in sorted(self.current.items()):
            if (
                self.links.connected(entrant)
                and entrant not in pending
                and self.busy[entrant] < self.capacity[entrant]
            ):
                rating = self.board.rating(player)
                ordinal = PRIOR_ORDINAL if rating is None else rating.ordinal
                candidates.append(Candidate(player, self.scheduled[player], ordinal))
        lineup = next_lineup(candidates, self.met, self.size)
        if lineup is None:
            return False
        number = self.next_group
        try:
            await self.arena.store.add_ladder_group(self.ladder_id, number, list(lineup))
        except StoreConflict:  # made by a process before us: read back on the next recovery
            self.next_group += 1
            return True
        self._note_group(number, lineup)
        self._changed()
        return True

    async def _create(self, group: Group, index: int) -> HostedMatch:
        spec = self.spec
        return await self.arena.create(
            spec.game,
            spec.players,
            spec.options,
            control=spec.control,
            seed=group_seed(self._seed, group.number),
            request_id=self._derived(f"match/{index}"),
            reserved={s: self._derived(f"join/{index}/{s}") for s in range(spec.players)},
            creator_secret=self._derived(f"creator/{index}"),
            forfeit_after=spec.forfeit_after,
            tournament_id=self.ladder_id,
            seed_shared=True,
        )

    async def _start(
        self, group: Group, index: int, players: tuple[str, ...], entrants: tuple[int, ...]
    ) -> None:
        hosted = await self._create(group, index)
        try:
            await self._seat(index, players, hosted.match_id)
        except NotRunning:  # closed meanwhile
            return
        self._follow(group, index, hosted)
        for seat, entrant in enumerate(entrants):
            self.links.tell(entrant, lpb.EnterLadderResponse(match=self.assignment(index, seat)))
        self._changed()

    async def _seat(self, index: int, players: tuple[str, ...], match_id: str) -> None:
        """Take every seat of match ``index`` for its players (again after a stop: a seat
        already taken with its token is taken back, the rest are joined)."""
        joins = [
            Join(seat, player, self.token(index, seat), self._derived(f"join/{index}/{seat}"))
            for seat, player in enumerate(players)
        ]
        await seat_all(self.arena, match_id, joins, None)

    def _follow(self, group: Group, index: int, hosted: HostedMatch) -> None:
        if hosted.ended:
            return
        group.state[index - group.number * self.size] = RUNNING
        self.match_ids[index] = hosted.match_id
        self.by_match[hosted.match_id] = index
        for entrant in set(self.seats(group, index)[1]):
            self.busy[entrant] += 1

    async def _void(self, group: Group, index: int, why: str) -> None:
        """Count match ``index`` for nothing: made (or found, if made before a stop) and
        cancelled at once, so the log says so."""
        hosted = await self._create(group, index)
        if not hosted.ended:
            with contextlib.suppress(NotRunning):
                await hosted.cancel(f"voided: {why}")
        self._collect(group, index, hosted.outcome())
        self._finish_group(group)

    def assignment(self, index: int, seat: int) -> tpb.MatchAssigned:
        group = self.groups[index // self.size]
        players, _ = self.seats(group, index)
        spec = self.spec
        return tpb.MatchAssigned(
            match_id=self.match_ids[index],
            seat=seat,
            token=self.token(index, seat),
            game=spec.game,
            players=spec.players,
            options=codec.struct_of(spec.options),
            names=list(players),
            move_ms=spec.move_ms,
            lowest_wins=spec.lowest_wins,
            index=index,
            time_control=spb.TimeControl(**spec.control.settings()),
        )

    # -- ended matches ---------------------------------------------------------------------

    def match_changed(self, hosted: HostedMatch) -> None:
        """The arena's report of a change of one of this ladder's matches."""
        index = self.by_match.get(hosted.match_id)
        if index is None or not hosted.ended:
            return
        group = self.groups.get(index // self.size)
        if group is None:
            return
        self._collect(group, index, hosted.outcome())
        self._finish_group(group)
        self._wake.set()

    def _collect(self, group: Group, index: int, outcome: Outcome) -> None:
        rotation = index - group.number * self.size
        if group.state[rotation] == DONE:
            return
        match_id = self.match_ids.pop(index, None)
        if match_id is not None:
            self.by_match.pop(match_id, None)
            for entrant in set(self.seats(group, index)[1]):
                self.busy[entrant] -= 1
        group.state[rotation] = DONE
        group.outcomes[index] = outcome
        self._changed()

    def _finish_group(self, group: Group) -> None:
        """A group whose every match has ended: its seed is revealed in every match's log,
        then its matches count (each pinned by the hash of its final log), and it is
        forgotten."""
        if any(state != DONE for state in group.state) or group.number not in self.groups:
            return
        del self.groups[group.number]
        for index in range(group.number * self.size, (group.number + 1) * self.size):
            self.group_of_match.pop(self.match_id(index), None)
        task = asyncio.create_task(self._reveal(group))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reveal(self, group: Group) -> None:
        for index, outcome in sorted(group.outcomes.items()):
            last_hash = outcome.last_hash
            for pause in (0.1, 0.5, 2.0, 5.0, None):
                if outcome.revealed:
                    break
                try:
                    revealed = await reveal_at_writer(self.arena, outcome.match_id)
                except Exception:
                    self.log.warning("ladder_reveal_failed", index=index, exc_info=True)
                    revealed = None
                if revealed is not None:
                    last_hash = revealed
                    break
                if pause is None:  # a restart reveals it and counts the group then
                    return
                await asyncio.sleep(pause)
            self._count(group, index, outcome, last_hash)
        self._advance()
        self._changed()
        self._wake.set()

    def _count(self, group: Group, index: int, outcome: Outcome, last_hash: bytes) -> None:
        players, _ = self.seats(group, index)
        played = (
            None
            if outcome.cancelled
            else Played(
                index=index,
                group=group.number,
                entrants=players,
                totals=outcome.totals,
                winners=outcome.winners,
                faults=outcome.faults,
                forfeited=outcome.forfeited,
                kinds=outcome.kinds,
            )
        )
        line = lpb.LadderMatch(
            index=index,
            group=group.number,
            match_id=outcome.match_id,
            players=list(players),
            last_hash=last_hash,
            cancelled=outcome.cancelled,
        )
        self.ended[index] = (played, line)

    def _advance(self) -> None:
        while self.board.counted in self.ended:
            played, line = self.ended.pop(self.board.counted)
            self.board.add(played)
            self.digest = chain_match(self.digest, line)

    # -- entrants ----------------------------------------------------------------------------

    def enter(self, entrant: int, version: str, capacity: int) -> Link[lpb.EnterLadderResponse]:
        """A new stream of ``entrant`` at ``version``: told first of its running matches.
        :class:`Throttled` for an entrant past :data:`MAX_VERSIONS` versions (each is a
        board row of its own, kept for good)."""
        player = player_name(self.spec.entrants[entrant], version)
        if version and player in self.spec.entrants:  # a ladder from before '@' was refused
            raise BadRequest(
                f"version {version!r} makes the board name {player!r}, another entrant's:"
                " enter with another version"
            )
        if player not in self.players:
            versions = sum(e == entrant for e in self.players.values())
            if versions >= MAX_VERSIONS:
                raise Throttled(
                    f"this entrant has entered with {versions} versions already: at most"
                    f" {MAX_VERSIONS} per ladder",
                    60_000,
                )
        link = self.links.connect(entrant)
        self.players.setdefault(player, entrant)
        self.current[entrant] = player
        self.capacity[entrant] = capacity
        self.last_seen[entrant] = time.time()
        for index in sorted(self.match_ids):
            group = self.groups.get(index // self.size)
            if group is None:
                continue
            for seat, e in enumerate(self.seats(group, index)[1]):
                if e == entrant:
                    link.offer(lpb.EnterLadderResponse(match=self.assignment(index, seat)))
        self._changed()
        self._wake.set()
        return link

    def leave(self, link: Link[lpb.EnterLadderResponse]) -> None:
        self.links.disconnect(link)
        self.last_seen[link.entrant] = time.time()
        self._changed()
        self._wake.set()

    async def close(self, reason: str) -> None:
        """Stop scheduling: running matches play on, waiting ones are voided."""
        if self.closed:
            return
        await self.arena.store.close_ladder(self.ladder_id, now_iso(), reason)
        self.closed = True
        await self._void_waiting()
        self._wake.set()
        self._changed()
        self.links.close(lpb.EnterLadderResponse(closed=ladder_info(self)))

    async def _void_waiting(self) -> None:
        """Void every match of a closed ladder that has not started (after a scheduling
        round in progress, which stops at the close)."""
        async with self._filling:
            for group in sorted(self.groups.values(), key=lambda g: g.number):
                for rotation, state in enumerate(group.state):
                    if state == WAITING:
                        await self._void(group, group.number * self.size + rotation, "closed")

    @property
    def final(self) -> bool:
        """Closed, read back, and every match it made counted: its board never changes
        again, and it may be kept as a row (``Ladders.keep``)."""
        return (
            self.closed
            and self.ready.is_set()
            and not self.groups
            and not self.ended
            and not self.match_ids
            and self.board.counted == self.next_group * self.size
        )

    def _changed(self) -> None:
        self.version += 1
        self._on_change(self)

    async def stop(self) -> None:
        self.stopping = True
        for task in [self.task, *self._tasks]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
