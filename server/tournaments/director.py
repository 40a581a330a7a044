"""One tournament's director: it starts the planned matches, a bounded number at once, seats
the entrants the schedule names, collects the results and stops when the plan is played, the
stop rule decides, or someone cancels.

Why it can be killed at any moment: every match it starts is created with a request id
derived from the tournament and the match's place in the plan, and every seat is joined
with a token derived from the tournament's secret, so doing a step twice does it once.
After a restart the director walks the plan, finds each match it had created (they are
ordinary matches, resumed by the arena) and carries on with the first one it had not.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from cardarena.competition import MatchPlan, Played
from cardarena.competition.schedule import PLANNED
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1 import tournament_pb2 as tpb

from ..errors import DirectedElsewhere, NotRunning
from ..hosting import Arena, HostedMatch
from ..hosting.arena import match_id_for
from ..hosting.completion import Background
from ..hosting.credentials import is_secret
from ..hosting.outcome import Outcome, stored_outcomes
from ..store import ENDED, StoreError, TournamentRecord, UnknownMatch, now_iso
from .entrants import Link, Links, derive
from .entry import Entry, plan_matches
from .info import Scores, tournament_info
from .reveals import REVEAL_RETRY_SECONDS, Reveals
from .seating import Join, JoinElsewhere, seat_all
from .spec import TournamentSpec
from .stoprule import StopRule

if TYPE_CHECKING:
    from .finals import Brief

log = structlog.get_logger(__name__)

RETRY_SECONDS = (0.1, 0.5, 2.0, 5.0)
"""Pauses between attempts to start a match while the store is away."""
CANCEL_WAIT_SECONDS = 10.0
FOLLOW_SECONDS = 0.5
"""How often a replica that does not direct a tournament looks for its new matches."""


RECOVER_BATCH = 500
"""Planned matches whose rows one read of a restart asks for."""


class Director:
    """Runs one tournament in this process."""

    def __init__(
        self,
        record: TournamentRecord,
        spec: TournamentSpec,
        arena: Arena,
        *,
        on_change: Callable[[Director], None],
        directing: bool = True,
        join_elsewhere: JoinElsewhere | None = None,
    ) -> None:
        self.record = record
        self.directing = directing
        """Whether this process schedules the matches; else it follows the replica that does
        from the store (answering GetTournament, Watch and Enter) and never writes."""
        self.spec = spec
        self.arena = arena
        self.join_elsewhere = join_elsewhere
        self.tournament_id = record.tournament_id
        self.entry = Entry(record, len(spec.entrants), spec.entry_ms)
        """The entrants' contributions to the seed, until the first match seals them."""
        # Every match, made on demand; its seeds come with the seal.
        self.plans = plan_matches(spec, record.seed)
        self.match_ids: dict[int, str] = {}
        """Plan index -> match id, for every match started."""
        self.by_match: dict[str, int] = {}
        self.running: set[int] = set()
        self.seated: set[int] = set()
        """Running matches whose every seat is joined: those an entrant may be told of (a
        seat's token works only once its join is durable)."""
        self.played: dict[int, Played] = {}
        self.void_matches = self.forfeits = 0
        """Of the matches played, those every seat forfeited, and the seats that forfeited:
        counted as each is collected, not summed over every match at each read."""
        self.failed: set[int] = set()
        self.ended_matches: dict[int, bytes] = {}
        """Plan index -> the hash of its log's last entry, for every match that ended."""
        self._ended_in: dict[int, int] = {}
        self.complete: set[int] = set()
        """The duplicate groups every match of which has ended (counted as each ends)."""
        self.revealed_groups: set[int] = set()
        """Complete groups every match of which shows its seed."""
        self.reveals = Reveals(arena, log.bind(tournament_id=self.tournament_id))
        """Which ended matches have their (shared) seed revealed, and revealing the rest."""
        self.scores: Scores | None = None
        """The standings as of ``scores.version`` (see :mod:`.info`)."""
        self.signed: Brief | None = None
        """Its results once final, signed, as sent (kept by the registry: :mod:`.finals`)."""
        self.next_index = 0
        self.stopping: str | None = None
        self.stop_rule = StopRule(spec, self.plans)
        """Why no more matches start (the stop rule decided, a cancellation)."""
        self.cancelled = record.status == "cancelled"
        self.ended = record.status != "running"
        self.end_reason = record.end_reason
        self.version = 0
        """Counts changes, so watchers know when to look again."""
        self.links: Links[tpb.EnterResponse] = Links(len(spec.entrants))
        self.capacity: dict[int, int] = {}
        """Entrant -> the most running matches it said it plays at once (none: no limit)."""
        self._on_change = on_change
        self._wake, self._next_change = asyncio.Event(), asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self._background = Background(log, "director_task_failed")
        self.log = log.bind(tournament_id=self.tournament_id)

    # -- credentials -------------------------------------------------------------------

    def _derived(self, label: str) -> str:
        return derive(self.record.secret, label)

    def token(self, index: int, seat: int) -> str:
        return self._derived(f"token/{index}/{seat}")

    def request_id(self, index: int) -> str:
        """Secret, so that nobody can create a match under the id of one still to come."""
        return self._derived(f"match/{index}")

    async def _sealed(self, *, directing: bool) -> None:
        """Plan every match from the seed mixed with the entrants' contributions (sealed here
        when directing; read back for an ended tournament)."""
        first = await self.arena.store.get_match(match_id_for(self.request_id(0)))
        await self.entry.settle(self.arena.store, directing=directing, started=first is not None)
        self._replan()

    def _replan(self) -> None:
        """The plan dealt from the mixed seed (made again only if contributions changed it)."""
        if (mixed := self.entry.mixed()) != self.record.seed:
            self.plans = plan_matches(self.spec, mixed)
            self.stop_rule.replan(self.plans)
        self._changed_now()

    # -- running -------------------------------------------------------------------------

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    def direct_instead(self, address: str) -> None:
        """This replica took the tournament's lease over: schedule it from where the log
        says it stands (walking the plan again finds every match already started)."""
        if self.directing or self.ended:
            return
        self.log.info("tournament_lease_taken")
        self.record = dataclasses.replace(self.record, director=address)
        self._restart(directing=True)

    def follow_instead(self) -> None:
        """The lease went to another replica: stop scheduling, follow it from the store."""
        if not self.directing or self.ended:
            return
        self.log.info("tournament_lease_lost")
        self.record = dataclasses.replace(self.record, director="another replica")
        self._restart(directing=False)

    def _restart(self, *, directing: bool) -> None:
        if self.task is not None:
            self.task.cancel()
        self.directing = directing
        self.next_index = 0
        self.start()

    async def _run(self) -> None:
        """Direct (or follow) until the tournament ends. While the store is away, try again
        from the log, with backoff; any other failure is a fault of the server, logged, and
        the tournament stays resumable (a restart or another replica carries on)."""
        pause = RETRY_SECONDS[0]
        while not self.ended:
            try:
                if self.directing:
                    await self._direct()
                else:
                    await self._follow_director()
                return
            except asyncio.CancelledError:
                raise
            except StoreError as error:
                self.log.warning("director_retrying", error=str(error))
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_SECONDS[-1])
                self.next_index = 0
            except Exception:
                self.log.exception("director_failed")
                return

    async def _direct(self) -> None:
        await self._sealed(directing=True)
        await self._recover()
        self._check_stop_rule()
        self.reveals.left = True  # whatever complete group the last director left
        while not self.ended:
            if self.reveals.left:  # a group completed, or a reveal another replica held
                await self._reveal_complete_groups()
            await self._start_what_fits()
            if self.cancelled:  # a match being started as the cancel came is one too
                await self._cancel_running()
            if not self.running and not self._may_start():
                await self._finish(self.stopping or PLANNED)
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):  # a reveal left is tried again soon
                await asyncio.wait_for(
                    self._wake.wait(), REVEAL_RETRY_SECONDS if self.reveals.left else None
                )

    async def _follow_director(self) -> None:
        """Another replica directs: keep up with its matches from the store (each followed
        like any match of another replica) until the tournament's row says it ended."""
        while True:
            record = await self.arena.store.get_tournament(self.tournament_id)
            if self.entry.sealed is None and await self.entry.read(self.arena.store):
                self._replan()
            while self.entry.sealed is not None and self.next_index < len(self.plans):
                plan = self.plans[self.next_index]
                try:
                    hosted = await self.arena.get(match_id_for(self.request_id(plan.index)))
                except UnknownMatch:
                    break
                self.next_index += 1
                self.match_ids[plan.index] = hosted.match_id
                self.by_match[hosted.match_id] = plan.index
                if hosted.ended:
                    self._collect(plan.index, hosted.outcome())
                else:
                    self.running.add(plan.index)
            for index in sorted(self.running - self.seated):
                hosted = await self.arena.get(self.match_ids[index])
                if hosted.running:  # every seat joined: entrants connected here are told
                    self.seated.add(index)
                    plan = self.plans[index]
                    for seat, entrant in enumerate(plan.seats):
                        told = tpb.EnterResponse(match=self.assignment(plan, seat))
                        self.links.tell(entrant, told)
            if record is not None and record.status != "running":
                self.cancelled = record.status == "cancelled"
                self.end_reason = record.end_reason
                self.ended = True
                self._changed_now()
                self.links.close(tpb.EnterResponse(ended=tournament_info(self)))
                return
            for group in sorted(self.complete - self.revealed_groups):  # a failover's leftovers
                await self.reveals.reveal_held(self.match_ids, self.plans.members(group))
                self._note_revealed(group)
            await asyncio.sleep(FOLLOW_SECONDS)

    async def load_results(self) -> None:
        """An ended tournament, loaded again: its matches' results, from the store, and its
        stop rule's verdict frozen again at the sample that reached it (the groups finished
        after it must not move the test a second reading shows, nor what is signed)."""
        await self._sealed(directing=False)
        await self._recover()
        self._check_stop_rule()

    async def _recover(self) -> None:
        """Find the matches a previous process started (a prefix of the plan), a batch of
        rows at a time: an ended one from its kept outcome (not hosted again), an unfinished
        one hosted and seated."""
        for start in range(0, len(self.plans), RECOVER_BATCH):
            plans = self.plans[start : start + RECOVER_BATCH]
            ids = [match_id_for(self.request_id(plan.index)) for plan in plans]
            records = await self.arena.store.get_matches(ids)
            ended = [
                records[i]
                for i in ids
                if i in records and records[i].status == ENDED and i not in self.arena.matches
            ]
            outcomes = await stored_outcomes(self.arena.store, ended)
            for plan, match_id in zip(plans, ids, strict=True):
                if match_id not in records:
                    break
                self.next_index = plan.index + 1
                if match_id in outcomes:
                    self.match_ids[plan.index] = match_id
                    self.by_match[match_id] = plan.index
                    self._collect(plan.index, outcomes[match_id])
                    continue
                await self._seat(plan, await self.arena.get(match_id))
            if self.next_index < start + len(plans):
                break
        if self.next_index:
            self.log.info("tournament_resumed", started=self.next_index)

    def _may_start(self) -> bool:
        """Whether the next planned match starts: until something stops the tournament; after
        the stop rule decided, only to finish the group begun (:meth:`StopRule.finishing`)."""
        if self.next_index >= len(self.plans):
            return False
        if not self.stopping:
            return True
        return not self.cancelled and self.stop_rule.finishing(self.plans, self.next_index)

    def _fits(self, plan: MatchPlan) -> bool:
        """Whether starting ``plan`` seats no entrant in more running matches than it said
        it plays at once. The plan is started in order (a restart finds a prefix of it), so
        a match that does not fit waits, and the ones after it with it."""
        if not self.capacity:
            return True
        busy = Counter(e for index in self.running for e in self.plans[index].seats)
        return all(busy[e] < self.capacity.get(e, busy[e] + 1) for e in set(plan.seats))

    def set_capacity(self, entrant: int, capacity: int) -> None:
        """The entrant's latest Enter says how many matches it plays at once (0: no limit)."""
        if capacity:
            self.capacity[entrant] = capacity
        else:
            self.capacity.pop(entrant, None)
        self._wake.set()

    async def _start_what_fits(self) -> None:
        while (
            self._may_start()
            and not self.ended
            and len(self.running) < self.spec.concurrency
            and self._fits(self.plans[self.next_index])
        ):
            plan = self.plans[self.next_index]
            for pause in (*RETRY_SECONDS, None):
                try:
                    hosted = await self._create(plan)
                    break
                except StoreError as error:
                    if pause is None:
                        raise
                    self.log.warning("match_not_started", index=plan.index, error=str(error))
                    await asyncio.sleep(pause)
            self.next_index += 1
            await self._seat(plan, hosted)

    async def _create(self, plan: MatchPlan) -> HostedMatch:
        assert self.entry.sealed is not None  # no match is dealt before the entry is sealed
        spec = self.spec
        return await self.arena.create(
            spec.game,
            spec.players,
            spec.options,
            control=spec.control,
            seed=plan.seed,
            request_id=self.request_id(plan.index),
            reserved={s: self._derived(f"join/{plan.index}/{s}") for s in range(spec.players)},
            creator_secret=self._derived(f"creator/{plan.index}"),
            forfeit_after=spec.forfeit_after,
            tournament_id=self.tournament_id,
            seed_shared=True,
        )

    async def _seat(self, plan: MatchPlan, hosted: HostedMatch) -> None:
        """Seat every entrant the plan names (again, harmlessly, after a restart), tell the
        connected ones, and follow the match to its end."""
        self.match_ids[plan.index] = hosted.match_id
        self.by_match[hosted.match_id] = plan.index
        if hosted.ended:
            self._collect(plan.index, hosted.outcome())
            return
        self.running.add(plan.index)
        if not all(s.token_hash is not None for s in hosted.seats):
            joins = [
                Join(
                    seat,
                    self.spec.entrants[entrant],
                    self.token(plan.index, seat),
                    self._derived(f"join/{plan.index}/{seat}"),
                )
                for seat, entrant in enumerate(plan.seats)
            ]
            try:  # here, or at the replica that writes it (see .seating)
                await seat_all(self.arena, hosted.match_id, joins, self.join_elsewhere)
            except NotRunning:  # cancelled while it was being seated: it has ended
                self.match_changed(hosted)
                return
        self.seated.add(plan.index)
        for seat, entrant in enumerate(plan.seats):
            self.links.tell(entrant, tpb.EnterResponse(match=self.assignment(plan, seat)))
        self._changed_now()

    def assignment(self, plan: MatchPlan, seat: int) -> tpb.MatchAssigned:
        return tpb.MatchAssigned(
            match_id=self.match_ids[plan.index],
            seat=seat,
            token=self.token(plan.index, seat),
            game=self.spec.game,
            players=self.spec.players,
            options=codec.struct_of(self.spec.options),
            names=[self.spec.entrants[e] for e in plan.seats],
            move_ms=self.spec.move_ms,
            lowest_wins=self.spec.lowest_wins,
            index=plan.index,
            time_control=spb.TimeControl(**self.spec.control.settings()),
        )

    def match_changed(self, hosted: HostedMatch) -> None:
        """The arena's report of a change of one of this tournament's matches."""
        index = self.by_match.get(hosted.match_id)
        if index is None or not hosted.ended or index not in self.running:
            return
        self.running.discard(index)
        self.seated.discard(index)
        self._collect(index, hosted.outcome())
        self._check_stop_rule()
        if self.directing and self.plans.group_of(index) in self.complete:
            self.reveals.left = True  # its last match: the group's seed is public now
        self._wake.set()

    def _collect(self, index: int, outcome: Outcome) -> None:
        plan = self.plans[index]
        if index not in self.ended_matches:
            ended = self._ended_in[plan.group] = self._ended_in.get(plan.group, 0) + 1
            if ended == self.plans.group_size:
                self.complete.add(plan.group)
        self.ended_matches[index] = outcome.last_hash
        if outcome.revealed:
            self.reveals.done.add(index)
        if outcome.cancelled:
            self.failed.add(index)
        else:
            if index not in self.played:
                self.forfeits += sum(outcome.forfeited)
                self.void_matches += bool(outcome.forfeited) and all(outcome.forfeited)
            self.played[index] = Played(
                index=index,
                group=plan.group,
                entrants=tuple(self.spec.entrants[e] for e in plan.seats),
                totals=outcome.totals,
                winners=outcome.winners,
                faults=outcome.faults,
                forfeited=outcome.forfeited,
                kinds=outcome.kinds,
            )
        self._changed_now()

    def _check_stop_rule(self) -> None:
        if self.stopping:
            return
        decision = self.stop_rule.check(self.played, self.complete_groups())
        if decision is not None:
            self.stopping = f"the stop rule accepted {decision.verdict} (llr {decision.llr:.3f})"
            self.log.info("tournament_decided", verdict=decision.verdict)

    def complete_groups(self) -> set[int]:
        return self.complete

    def _note_revealed(self, group: int) -> None:
        """Once every match of ``group`` shows its seed, no reveal pass looks at it again (a
        pass costs the groups left, not every group of the plan)."""
        if all(index in self.reveals.done for index in self.plans.members(group)):
            self.revealed_groups.add(group)

    async def cancel(self, reason: str) -> None:
        """Stop starting matches, cancel the running ones, end."""
        if self.ended:
            return
        if not self.directing:
            raise DirectedElsewhere(self.tournament_id, self.record.director)
        self.stopping = reason
        self.cancelled = True
        self.entry.close()  # no more waiting for entrants: no match will start
        await self._cancel_running()
        self._wake.set()
        if self.task is None or self.task.done():
            await self._finish(reason)
            return
        # The director ends the tournament once its cancelled matches are reported: the
        # caller is answered with the tournament ended (or as far as it got in a while).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.task), CANCEL_WAIT_SECONDS)

    async def _cancel_running(self) -> None:
        assert self.stopping is not None
        for index in sorted(self.running):
            hosted = await self.arena.get(self.match_ids[index])
            if not hosted.ended:
                with contextlib.suppress(Exception):  # it may have ended meanwhile: fine
                    await hosted.cancel(self.stopping)

    async def _reveal_complete_groups(self, *, every: bool = False) -> bool:
        """Reveal the seed of every ended match whose duplicate group is complete (``every``:
        of every started match, at the end, when no more of a group will be played), where
        this replica writes it; whether any is left to try again (:mod:`.reveals`)."""
        complete, self.reveals.left = self.complete_groups(), False  # set again meanwhile
        begun = self.plans.group_of(self.next_index - 1) + 1 if self.next_index else 0
        for group in range(begun) if every else sorted(complete - self.revealed_groups):
            if group in self.revealed_groups:
                continue
            members = self.plans.members(group)
            self.reveals.left |= await self.reveals.reveal(
                self.match_ids, members, skip=self.running, last_hashes=self.ended_matches
            )
            self._note_revealed(group)
        return self.reveals.left

    async def _finish(self, reason: str) -> None:
        # Every seed is shown before the tournament says it ended: a group cut short by the
        # stop rule or a cancellation will not be played any further.
        await self.reveals.until_done(lambda: self._reveal_complete_groups(every=True))
        status = "cancelled" if self.cancelled else "ended"
        await self.arena.store.end_tournament(self.tournament_id, now_iso(), reason, status)
        self.ended = True
        self.end_reason = reason
        self.log.info("tournament_ended", reason=reason, played=len(self.played))
        self._changed_now()
        self.links.close(tpb.EnterResponse(ended=tournament_info(self)))

    # -- entrants and watchers -------------------------------------------------------------

    async def offer(self, entrant: int, contribution: bytes | None) -> None:
        """An entrant entered: during the entry, what it contributes is noted for the seal."""
        if not self.ended:
            await self.entry.offer(self.arena.store, entrant, contribution)

    def connect(self, entrant: int) -> Link[tpb.EnterResponse]:
        """A new stream for ``entrant``: told first of every match it sits in that runs."""
        link = self.links.connect(entrant)
        for index in sorted(self.seated):
            plan = self.plans[index]
            for seat, e in enumerate(plan.seats):
                if e == entrant:
                    link.offer(tpb.EnterResponse(match=self.assignment(plan, seat)))
        return link

    def disconnect(self, link: Link[tpb.EnterResponse]) -> None:
        """A stream ended; if it was the entrant's last, each running match of it logs a
        disconnect fault against its seats (in a task of its own: the stream's handler may
        be being cancelled)."""
        if self.links.disconnect(link) and not self.ended and not link.dropped:
            self._background.spawn(self._disconnected(link.entrant))

    def may_cancel(self, secret: str) -> bool:
        """Whether ``secret`` is the tournament's creator secret (constant time)."""
        return is_secret(self.spec.creator, secret)

    async def _disconnected(self, entrant: int) -> None:
        for index in sorted(self.running):
            seats = [s for s, e in enumerate(self.plans[index].seats) if e == entrant]
            if not seats:
                continue
            with contextlib.suppress(Exception):
                hosted = await self.arena.get(self.match_ids[index])
                for seat in seats:
                    await hosted.disconnected(seat)

    def _changed_now(self) -> None:
        self.version += 1
        self._on_change(self)
        woken, self._next_change = self._next_change, asyncio.Event()
        woken.set()

    async def changed_since(self, version: int) -> None:
        """Wait until something changed after ``version`` (returns at once if it has)."""
        if self.version <= version:
            await self._next_change.wait()

    async def stop(self) -> None:
        """This process is stopping: the director stops, the tournament stays resumable (what
        its tasks were doing, a reveal or a fault, is done again or not needed after a
        restart)."""
        for task in [self.task, *self._background.tasks]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
